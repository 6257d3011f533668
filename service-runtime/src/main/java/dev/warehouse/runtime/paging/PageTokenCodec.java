package dev.warehouse.runtime.paging;

import dev.warehouse.runtime.error.InvalidArgumentException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals DynamoDB continuation keys into opaque, tamper-proof page tokens (AIP-158).
 *
 * <p>A token is AES-GCM over the last evaluated key, with the request's scope (its route and
 * partition, plus any filter) as associated data. A token edited by hand, forged, or produced for
 * another scope (another product's partition, say) fails authentication and is refused as
 * INVALID_ARGUMENT, so a token can never steer a read into data the request did not ask for.
 * Instances that share a key (config {@code PAGE_TOKEN_KEY}) accept each other's tokens; keys listed in
 * {@code PAGE_TOKEN_ACCEPTED_KEYS} open tokens too but never seal one, which lets the key rotate without
 * breaking a listing in progress (docs/operations/rotation.md).
 */
public final class PageTokenCodec {

  private static final byte VERSION = 1;
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final int MAX_TOKEN_CHARS = 2048;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final SecretKey key;
  /** The key tokens are sealed with, then the keys whose tokens are still opened. */
  private final List<SecretKey> opening;

  public PageTokenCodec(byte[] key) {
    this(key, List.of());
  }

  /**
   * Seals with {@code key}, and opens tokens sealed with it or with one of {@code accepted}: during a
   * rotation every instance opens both keys' tokens, so no listing in progress breaks.
   */
  public PageTokenCodec(byte[] key, List<byte[]> accepted) {
    this.key = aes(key);
    List<SecretKey> keys = new ArrayList<>(List.of(this.key));
    accepted.forEach(other -> keys.add(aes(other)));
    this.opening = List.copyOf(keys);
  }

  private static SecretKey aes(byte[] key) {
    if (key.length != 16 && key.length != 32) {
      throw new IllegalArgumentException("page token key must be 16 or 32 bytes");
    }
    return new SecretKeySpec(key.clone(), "AES");
  }

  /** A codec with a fresh random key: its tokens are valid only in this process. */
  public static PageTokenCodec withRandomKey() {
    byte[] key = new byte[32];
    RANDOM.nextBytes(key);
    return new PageTokenCodec(key);
  }

  /** Seals {@code lastKey} (attribute name to string value) for requests of {@code scope}. */
  public String encode(String scope, Map<String, String> lastKey) {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(scope.getBytes(StandardCharsets.UTF_8));
      byte[] sealed = cipher.doFinal(serialize(lastKey));
      ByteBuffer token = ByteBuffer.allocate(1 + NONCE_BYTES + sealed.length).put(VERSION).put(nonce).put(sealed);
      return Base64.getUrlEncoder().withoutPadding().encodeToString(token.array());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is unavailable", e);
    }
  }

  /**
   * Opens a token produced by {@link #encode} for the same scope.
   *
   * @throws InvalidArgumentException on field {@code page_token} for anything else
   */
  public Map<String, String> decode(String scope, String token) {
    try {
      if (token.length() > MAX_TOKEN_CHARS) {
        throw invalid();
      }
      byte[] raw = Base64.getUrlDecoder().decode(token);
      if (raw.length < 1 + NONCE_BYTES + TAG_BITS / 8 || raw[0] != VERSION) {
        throw invalid();
      }
      return deserialize(open(scope, raw));
    } catch (GeneralSecurityException | IllegalArgumentException | IOException e) {
      // Authentication failure, bad base64 or bad layout: all are "not a token we issued".
      throw invalid();
    }
  }

  /** The plaintext, from the first key whose authentication tag matches. */
  private byte[] open(String scope, byte[] raw) throws GeneralSecurityException {
    GeneralSecurityException last = null;
    for (SecretKey candidate : opening) {
      try {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, candidate, new GCMParameterSpec(TAG_BITS, raw, 1, NONCE_BYTES));
        cipher.updateAAD(scope.getBytes(StandardCharsets.UTF_8));
        return cipher.doFinal(raw, 1 + NONCE_BYTES, raw.length - 1 - NONCE_BYTES);
      } catch (AEADBadTagException e) {
        last = e;
      }
    }
    throw last;
  }

  private static InvalidArgumentException invalid() {
    return InvalidArgumentException.of("page_token", "is not a page token issued for this request");
  }

  private static byte[] serialize(Map<String, String> lastKey) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(lastKey.size());
      for (Map.Entry<String, String> e : lastKey.entrySet()) {
        out.writeUTF(e.getKey());
        out.writeUTF(e.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static Map<String, String> deserialize(byte[] plain) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(plain))) {
      int size = in.readUnsignedByte();
      Map<String, String> lastKey = new LinkedHashMap<>();
      for (int i = 0; i < size; i++) {
        lastKey.put(in.readUTF(), in.readUTF());
      }
      if (in.available() != 0) {
        throw new IOException("trailing bytes");
      }
      return lastKey;
    }
  }
}
