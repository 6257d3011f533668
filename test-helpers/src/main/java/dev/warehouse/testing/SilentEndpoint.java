package dev.warehouse.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A DynamoDB endpoint that takes requests and never answers, and counts them: every attempt a
 * client makes comes on a connection of its own (none is ever freed by an answer).
 */
public final class SilentEndpoint implements AutoCloseable {

  private final ServerSocket server;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger requests = new AtomicInteger();

  public SilentEndpoint() throws IOException {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "silent-endpoint");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** Requests received so far. */
  public int requests() {
    return requests.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        open.add(socket);
        Thread reader = new Thread(() -> drain(socket), "silent-connection");
        reader.setDaemon(true);
        reader.start();
      } catch (IOException closed) {
        return;
      }
    }
  }

  /** Reads until the client closes the connection; counts the request when its first bytes arrive. */
  private void drain(Socket socket) {
    try (socket; InputStream in = socket.getInputStream()) {
      byte[] buffer = new byte[8192];
      boolean counted = false;
      int read;
      while ((read = in.read(buffer)) >= 0) {
        if (read > 0 && !counted) {
          requests.incrementAndGet();
          counted = true;
        }
      }
    } catch (IOException reset) {
      // the client reset the connection
    } finally {
      open.remove(socket);
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket socket : open) {
      socket.close();
    }
  }
}
