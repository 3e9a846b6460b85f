package org.shardline;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads the JNI library once per class loader, in this order:
 *
 * <ol>
 *   <li>{@code -Dshardline.native.path=/path/to/libshardline_java.so}: exactly that file;
 *   <li>{@code System.loadLibrary("shardline_java")}, i.e. {@code java.library.path};
 *   <li>the copy packaged in the jar at {@code native/<os>-<arch>/}, extracted into a fresh
 *       directory only this user can read, created under {@code -Dshardline.native.dir} (default
 *       {@code java.io.tmpdir}; point it elsewhere when {@code /tmp} is mounted {@code noexec}).
 * </ol>
 *
 * <p>The loaded library must report the jar's own version, so a stale library on {@code
 * java.library.path} is refused instead of failing later with a missing symbol.
 */
final class NativeLibrary {
  static final String NAME = "shardline_java";
  static final String PATH_PROPERTY = "shardline.native.path";
  static final String DIR_PROPERTY = "shardline.native.dir";

  private static volatile String loadedFrom;

  private NativeLibrary() {}

  static native String nVersion();

  static void load() {
    if (loadedFrom != null) return;
    synchronized (NativeLibrary.class) {
      if (loadedFrom != null) return;
      String from = loadSomehow();
      String expected = "shardline/" + jarVersion();
      String actual = nVersion();
      if (!expected.equals(actual)) {
        throw new UnsatisfiedLinkError(
            "the native library from " + from + " is " + actual + " but this jar is " + expected);
      }
      loadedFrom = from;
    }
  }

  /** Where the library came from (for diagnostics). */
  static String loadedFrom() {
    load();
    return loadedFrom;
  }

  private static String loadSomehow() {
    String path = System.getProperty(PATH_PROPERTY);
    if (path != null && !path.isEmpty()) {
      System.load(Path.of(path).toAbsolutePath().toString());
      return path;
    }
    try {
      System.loadLibrary(NAME);
      return "java.library.path";
    } catch (UnsatisfiedLinkError notThere) {
      try {
        return extractAndLoad();
      } catch (RuntimeException | UnsatisfiedLinkError e) {
        e.addSuppressed(notThere);
        throw e;
      }
    }
  }

  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String o =
        os.contains("linux") ? "linux" : os.contains("mac") || os.contains("darwin") ? "macos" : os;
    String a =
        arch.equals("amd64") || arch.equals("x86_64")
            ? "x86_64"
            : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
    return o + "-" + a;
  }

  private static String extractAndLoad() {
    String resource = "/native/" + platform() + "/" + System.mapLibraryName(NAME);
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "no " + NAME + " for " + platform() + ": not on java.library.path and not in the jar at "
                + resource + " (set -D" + PATH_PROPERTY + " to a library built with cargo)");
      }
      String base = System.getProperty(DIR_PROPERTY, System.getProperty("java.io.tmpdir"));
      Path parent = Path.of(base);
      Files.createDirectories(parent);
      // A fresh directory per load with owner-only access: no other user can swap the file
      // between the copy and the load.
      Path dir =
          FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
              ? Files.createTempDirectory(
                  parent, "shardline-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))
              : Files.createTempDirectory(parent, "shardline-");
      Path file = dir.resolve(System.mapLibraryName(NAME));
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      System.load(file.toString());
      // Once mapped the file is not needed on Unix; elsewhere it goes when the JVM exits.
      try {
        Files.delete(file);
        Files.delete(dir);
      } catch (IOException stillInUse) {
        file.toFile().deleteOnExit();
        dir.toFile().deleteOnExit();
      }
      return "jar:" + resource;
    } catch (IOException e) {
      throw new UncheckedIOException("extracting " + resource, e);
    }
  }

  private static String jarVersion() {
    Properties p = new Properties();
    try (InputStream in = NativeLibrary.class.getResourceAsStream("shardline.properties")) {
      if (in != null) p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.getProperty("version", "unknown");
  }
}
