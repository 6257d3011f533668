package dev.warehouse.gateway.auth;

import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The client side: a token sent as {@code authorization: Bearer <token>} on every call of a channel. */
public final class BearerToken {

  private BearerToken() {}

  public static ClientInterceptor interceptor(String token) {
    Metadata headers = new Metadata();
    headers.put(CallerAuthentication.AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  /** A token file as {@code dev-tokens} writes it: the token, and perhaps a line break. */
  public static String read(Path file) throws IOException {
    return Files.readString(file).strip();
  }
}
