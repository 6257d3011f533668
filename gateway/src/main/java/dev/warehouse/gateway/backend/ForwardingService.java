package dev.warehouse.gateway.backend;

import io.grpc.BindableService;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * Serves a backend's contract under its own name, forwarding each call's serialized message as it
 * is: the gateway never decodes or re-encodes a request or a response. The definition keeps the
 * contract's descriptors, so reflection describes the service and its routes as the backend would.
 */
public final class ForwardingService implements BindableService {

  /**
   * Messages as raw bytes, each copied once on the way in and once on the way out. The incoming
   * stream knows its length, so the array is allocated at its size (readAllBytes would allocate 8 KB
   * chunks per message); the outgoing stream tells its length and drains itself into the frame, so
   * gRPC neither buffers a message of unknown length nor copies it through a scratch buffer.
   */
  enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new MessageStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try (stream) {
        if (stream instanceof KnownLength) {
          byte[] message = new byte[stream.available()];
          if (stream.readNBytes(message, 0, message.length) == message.length && stream.read() == -1) {
            return message;
          }
          throw new IOException("message length differs from its declared length");
        }
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private static final class MessageStream extends ByteArrayInputStream implements KnownLength, Drainable {
    MessageStream(byte[] message) {
      super(message);
    }

    @Override
    public synchronized int drainTo(OutputStream target) throws IOException {
      int length = count - pos;
      target.write(buf, pos, length);
      pos = count;
      return length;
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
