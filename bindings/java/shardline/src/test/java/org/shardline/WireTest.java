package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Java enumerations that mirror a wire enumeration name exactly its generated values, so a
 * value added to the core fails here until the enum has it.
 */
class WireTest {
  static List<String> values(Class<?> names) throws IllegalAccessException {
    List<String> out = new ArrayList<>();
    for (Field f : names.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        out.add((String) f.get(null));
      }
    }
    // Reflection promises no field order.
    out.sort(null);
    return out;
  }

  @Test
  void coordinatorPhasesAreTheWirePhases() throws IllegalAccessException {
    List<String> java =
        Arrays.stream(AbstractCoordinator.Phase.values()).map(p -> p.wireName).sorted().toList();
    assertEquals(values(Wire.CoordinatorPhase.class), java);
  }

  @Test
  void memberStatusesAreTheWireStatuses() throws IllegalAccessException {
    List<String> java =
        Arrays.stream(MemberStatus.values()).map(MemberStatus::pekkoName).sorted().toList();
    assertEquals(values(Wire.MemberStatus.class), java);
  }
}
