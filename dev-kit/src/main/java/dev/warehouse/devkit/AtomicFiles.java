package dev.warehouse.devkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Files the processes read while they serve (certificates, keys, JWKS, tokens) are replaced in one step, so a
 * reader never sees half of one; a secret is readable by its owner only from the moment it exists.
 */
final class AtomicFiles {

  private AtomicFiles() {}

  static void write(Path file, byte[] content, boolean secret) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path temp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
    try {
      if (Files.getFileStore(dir).supportsFileAttributeView("posix")) {
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString(secret ? "rw-------" : "rw-r--r--"));
      }
      Files.write(temp, content);
      Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(temp);
    }
  }
}
