package org.shardline;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A cluster member as the strategies see it.
 *
 * @param address node address, e.g. {@code pekko://ClusterSystem@10.0.0.1:7355}
 * @param appVersion {@code pekko.cluster.app-version}; compared with Pekko's {@code Version}
 *     rules ({@code "1.0"} equals {@code "1.0.0"})
 * @param upNumber age order among members (smaller is older); only Akka's newer tie-break reads it
 */
public record Member(
    String address, MemberStatus status, String appVersion, String dataCenter, int upNumber) {

  public Member {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(appVersion, "appVersion");
    Objects.requireNonNull(dataCenter, "dataCenter");
  }

  /** An Up member with Pekko's defaults: app version 0.0.0, data center "default". */
  public static Member up(String address) {
    return new Member(address, MemberStatus.UP, "0.0.0", "default", Integer.MAX_VALUE);
  }

  public Member withStatus(MemberStatus s) {
    return new Member(address, s, appVersion, dataCenter, upNumber);
  }

  public Member withAppVersion(String v) {
    return new Member(address, status, v, dataCenter, upNumber);
  }

  public Member withDataCenter(String dc) {
    return new Member(address, status, appVersion, dc, upNumber);
  }

  public Member withUpNumber(int n) {
    return new Member(address, status, appVersion, dataCenter, n);
  }

  /** The member as the native operations take it. */
  Map<String, Object> init() {
    Map<String, Object> m = new HashMap<>();
    m.put("address", address);
    m.put("status", status.pekkoName());
    m.put("appVersion", appVersion);
    m.put("dataCenter", dataCenter);
    m.put("upNumber", upNumber);
    return m;
  }

  /** A member as the native operations answer it. */
  static Member of(Map<String, Object> m) {
    return new Member(
        (String) m.get("address"),
        MemberStatus.fromPekkoName((String) m.get("status")),
        (String) m.get("appVersion"),
        (String) m.get("dataCenter"),
        ((Long) m.get("upNumber")).intValue());
  }

  String[] fields() {
    return new String[] {address, status.pekkoName(), appVersion, dataCenter};
  }
}
