package dev.warehouse.gateway.backend;

import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Serves a backend's contract under its own name, forwarding each call's serialized message as it
 * is: the gateway never decodes or re-encodes a request or a response. The definition keeps the
 * contract's descriptors, so reflection describes the service and its routes as the backend would.
 */
public final class ForwardingService implements BindableService {

  /** Messages as raw bytes. */
  enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try (stream) {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private final ServiceDescriptor contract;
  private final Backend backend;

  /** @param contract the generated service descriptor, e.g. {@code InventoryServiceGrpc.getServiceDescriptor()} */
  public ForwardingService(ServiceDescriptor contract, Backend backend) {
    this.contract = contract;
    this.backend = backend;
  }

  @Override
  public ServerServiceDefinition bindService() {
    ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(contract.getName())
        .setSchemaDescriptor(contract.getSchemaDescriptor());
    java.util.List<MethodDescriptor<byte[], byte[]>> methods = new java.util.ArrayList<>();
    for (MethodDescriptor<?, ?> method : contract.getMethods()) {
      if (method.getType() != MethodDescriptor.MethodType.UNARY) {
        throw new IllegalStateException("only unary methods are forwarded: " + method.getFullMethodName());
      }
      MethodDescriptor<byte[], byte[]> raw = method.toBuilder(Bytes.INSTANCE, Bytes.INSTANCE).build();
      methods.add(raw);
      descriptor.addMethod(raw);
    }
    ServerServiceDefinition.Builder definition = ServerServiceDefinition.builder(descriptor.build());
    for (MethodDescriptor<byte[], byte[]> raw : methods) {
      definition.addMethod(raw, ServerCalls.asyncUnaryCall((request, response) -> backend.forward(raw, request, response)));
    }
    return definition.build();
  }
}
