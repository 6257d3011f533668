package dev.warehouse.gateway.admin;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.admin.v1.UnansweredInstance;
import dev.warehouse.runtime.discovery.BackendInstances;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.admin.HotKeysQuery;
import dev.warehouse.runtime.error.DeadlineExceededException;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.runtime.grpc.UnaryCalls;
import io.grpc.ChannelCredentials;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code warehouse.admin.v1.AdminService} on the gateway: ListHotKeys asks every current instance of
 * every backend (each keeps its own counts; the instances are those the balanced channels follow,
 * {@link BackendInstances}) and adds their answers up per service and access pattern
 * ({@link HotKeysMerge}). It is not forwarded: one instance's answer would be a fraction of the story.
 *
 * <p>Each instance has a channel of its own, apart from the balanced backend channels and their circuit
 * breakers (an admin call is no sign of a backend's health). Every instance gets the same budget: the
 * gateway's default deadline, and never past the caller's deadline less the minimum forward budget, so
 * an instance that does not answer is reported in {@code unanswered_instances} while the others' counts
 * still reach the caller. When no instance answers, the call fails: DEADLINE_EXCEEDED when none answered
 * in time, else UNAVAILABLE ({@code NO_INSTANCE_ANSWERED}).
 */
public final class GatewayAdminEndpoint extends AdminServiceGrpc.AdminServiceImplBase implements AutoCloseable {

  private record Instance(String service, String address, ManagedChannel channel) {}

  private record Answer(Instance instance, ListHotKeysResponse response, Status failure) {}

  private record Key(String service, InetSocketAddress address) {}

  private final List<BackendInstances> backends;
  private final EventLoopGroup eventLoops;
  private final Map<String, ChannelCredentials> credentials;
  private final Duration defaultDeadline;
  private final Duration minForwardBudget;
  private final Map<Key, ManagedChannel> channels = new HashMap<>(); // guarded by this
  private boolean closed; // guarded by this

  /**
   * @param backends every backend's instances, named as the answers carry them ("inventory-service")
   * @param credentials how the channels to each backend (by name) are secured, as its forwarding channels are
   */
  public GatewayAdminEndpoint(List<BackendInstances> backends, EventLoopGroup eventLoops, Duration defaultDeadline,
      Duration minForwardBudget, Map<String, ChannelCredentials> credentials) {
    this.backends = List.copyOf(backends);
    this.eventLoops = eventLoops;
    this.credentials = Map.copyOf(credentials);
    this.defaultDeadline = defaultDeadline;
    this.minForwardBudget = minForwardBudget;
  }

  /**
   * The instances now, each with its channel: kept while the instance is, made for one added, closed for one
   * removed (admin calls are rare: a channel per instance is made on the first call that asks it).
   */
  private synchronized List<Instance> currentInstances() {
    if (closed) {
      throw new UnavailableException("GATEWAY_STOPPING", "the gateway is stopping", Map.of());
    }
    List<Instance> now = new ArrayList<>();
    for (BackendInstances backend : backends) {
      for (InetSocketAddress address : backend.current()) {
        ManagedChannel channel = channels.computeIfAbsent(new Key(backend.service(), address),
            key -> EventLoops.channelTo(address, eventLoops, credentials.get(backend.service())).build());
        now.add(new Instance(backend.service(), BackendInstances.format(address), channel));
      }
    }
    Set<ManagedChannel> kept = Set.copyOf(now.stream().map(Instance::channel).toList());
    channels.values().removeIf(channel -> {
      if (kept.contains(channel)) {
        return false;
      }
      channel.shutdown(); // calls in flight on it may finish
      return true;
    });
    return now;
  }

  @Override
  public void listHotKeys(ListHotKeysRequest request, StreamObserver<ListHotKeysResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      HotKeysQuery query = HotKeysQuery.of(request);
      // Each instance's whole top list, so that the sums rank keys over all of them.
      ListHotKeysRequest ask = request.toBuilder().setLimit(HotKeysQuery.MAX_LIMIT).build();
      Deadline budget = budget();
      List<Instance> instances = currentInstances();
      if (instances.isEmpty()) {
        // No name resolved to any address: there was no one to ask.
        throw new UnavailableException("NO_INSTANCE_ANSWERED", "no backend instance is known to ask ListHotKeys",
            Map.of("instances", "0"));
      }
      List<CompletableFuture<Answer>> answers = instances.stream().map(instance -> ask(instance, ask, budget)).toList();
      return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
          .thenApply(done -> merge(answers.stream().map(CompletableFuture::join).toList(), query.limit()));
    }, response -> response);
  }

  private Deadline budget() {
    Deadline own = Deadline.after(defaultDeadline.toNanos(), TimeUnit.NANOSECONDS);
    Deadline callers = Context.current().getDeadline();
    return callers == null ? own : own.minimum(callers.offset(-minForwardBudget.toNanos(), TimeUnit.NANOSECONDS));
  }

  private static CompletableFuture<Answer> ask(Instance instance, ListHotKeysRequest request, Deadline budget) {
    CompletableFuture<Answer> answer = new CompletableFuture<>();
    AdminServiceGrpc.newStub(instance.channel()).withDeadline(budget).listHotKeys(request, new StreamObserver<>() {
      @Override
      public void onNext(ListHotKeysResponse value) {
        answer.complete(new Answer(instance, value, null));
      }

      @Override
      public void onError(Throwable t) {
        answer.complete(new Answer(instance, null, Status.fromThrowable(t)));
      }

      @Override
      public void onCompleted() {
        answer.complete(new Answer(instance, null, Status.INTERNAL.withDescription("no answer")));
      }
    });
    return answer;
  }

  private static ListHotKeysResponse merge(List<Answer> answers, int limit) {
    List<ListHotKeysResponse> answered = new ArrayList<>();
    List<UnansweredInstance> unanswered = new ArrayList<>();
    for (Answer answer : answers) {
      if (answer.response() != null) {
        answered.add(answer.response());
      } else {
        unanswered.add(UnansweredInstance.newBuilder()
            .setService(answer.instance().service())
            .setAddress(answer.instance().address())
            .setCode(answer.failure().getCode().name())
            .build());
      }
    }
    if (answered.isEmpty() && !unanswered.isEmpty()) {
      if (unanswered.stream().allMatch(u -> u.getCode().equals(Status.Code.DEADLINE_EXCEEDED.name()))) {
        throw new DeadlineExceededException("DEADLINE_EXCEEDED",
            "none of the " + unanswered.size() + " instances answered ListHotKeys within the deadline", (Throwable) null);
      }
      throw new UnavailableException("NO_INSTANCE_ANSWERED",
          "none of the " + unanswered.size() + " instances answered ListHotKeys",
          Map.of("instances", Integer.toString(unanswered.size()), "first_code", unanswered.get(0).getCode()));
    }
    return HotKeysMerge.merge(answered, unanswered, limit);
  }

  @Override
  public void close() {
    List<ManagedChannel> open;
    synchronized (this) {
      closed = true;
      open = List.copyOf(channels.values());
      channels.clear();
    }
    EventLoops.close(open);
  }
}
