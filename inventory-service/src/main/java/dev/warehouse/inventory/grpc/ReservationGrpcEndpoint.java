package dev.warehouse.inventory.grpc;

import com.google.protobuf.Timestamp;
import dev.warehouse.inventory.domain.OutOfStockException;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.inventory.v1.CommitReservationRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.ListExpiredHoldsRequest;
import dev.warehouse.inventory.v1.ListExpiredHoldsResponse;
import dev.warehouse.inventory.v1.ReleaseReservationRequest;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import dev.warehouse.inventory.v1.StockShortages;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.Violations;
import dev.warehouse.runtime.grpc.UnaryCalls;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.paging.PageSize;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The gRPC face of the reservations ({@code warehouse.inventory.v1.ReservationService}): validates each
 * request (every bad field in one INVALID_ARGUMENT, before anything is read), delegates to
 * {@link Reservations} and maps the answer.
 */
public final class ReservationGrpcEndpoint extends ReservationServiceGrpc.ReservationServiceImplBase {

  /**
   * Lines of one reservation after merging: its transaction holds the reservation and, per line, the
   * stock record and its marker's delete and put, within DynamoDB's 100 items (1 + 3 x 33).
   */
  public static final int MAX_LINES = 33;
  /** Units of one line. */
  public static final long MAX_LINE_QUANTITY = 1_000_000_000L;
  /** The longest hold a caller may ask for. */
  public static final Duration MAX_HOLD = Duration.ofMinutes(15);

  private final Reservations reservations;

  public ReservationGrpcEndpoint(Reservations reservations) {
    this.reservations = reservations;
  }

  @Override
  public void reserveStock(ReserveStockRequest request, StreamObserver<dev.warehouse.inventory.v1.Reservation> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String orderId = v.id("order_id", request.getOrderId());
      List<ReservationLine> lines = new ArrayList<>();
      for (int i = 0; i < request.getLinesCount(); i++) {
        dev.warehouse.inventory.v1.ReservationLine line = request.getLines(i);
        String field = "lines[" + i + "]";
        long quantity = line.getQuantity();
        if (quantity < 1 || quantity > MAX_LINE_QUANTITY) {
          v.add(field + ".quantity", "must be between 1 and " + MAX_LINE_QUANTITY);
        }
        lines.add(new ReservationLine(v.id(field + ".product_id", line.getProductId()),
            v.id(field + ".warehouse_id", line.getWarehouseId()), quantity));
      }
      if (lines.isEmpty()) {
        v.add("lines", "is required: at least one line");
      } else if (v.isEmpty() && ReservationLine.merged(lines).size() > MAX_LINES) {
        v.add("lines", "must hold at most " + MAX_LINES + " distinct products and warehouses (DynamoDB's 100-item "
            + "transaction limit), got " + ReservationLine.merged(lines).size());
      } else if (v.isEmpty() && ReservationLine.merged(lines).stream().anyMatch(l -> l.quantity() > MAX_LINE_QUANTITY)) {
        v.add("lines", "merged lines of one product and warehouse must hold at most " + MAX_LINE_QUANTITY + " units");
      }
      Optional<Duration> hold = Optional.empty();
      if (request.hasHoldDuration()) {
        Duration asked = Duration.ofSeconds(request.getHoldDuration().getSeconds(), request.getHoldDuration().getNanos());
        if (asked.isNegative() || asked.compareTo(MAX_HOLD) > 0) {
          v.add("hold_duration", "must be between 0 and " + MAX_HOLD.toMinutes() + " minutes");
        } else if (!asked.isZero()) {
          hold = Optional.of(asked);
        }
      }
      v.throwIfAny();
      return reservations.reserve(orderId, lines, hold).exceptionally(ReservationGrpcEndpoint::withShortages);
    }, ReservationGrpcEndpoint::toProto);
  }

  @Override
  public void confirmReservation(ConfirmReservationRequest request,
      StreamObserver<dev.warehouse.inventory.v1.Reservation> observer) {
    UnaryCalls.reply(observer, () -> reservations.confirm(orderId(request.getOrderId())), ReservationGrpcEndpoint::toProto);
  }

  @Override
  public void commitReservation(CommitReservationRequest request,
      StreamObserver<dev.warehouse.inventory.v1.Reservation> observer) {
    UnaryCalls.reply(observer, () -> reservations.commit(orderId(request.getOrderId())), ReservationGrpcEndpoint::toProto);
  }

  @Override
  public void releaseReservation(ReleaseReservationRequest request,
      StreamObserver<dev.warehouse.inventory.v1.Reservation> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String orderId = v.id("order_id", request.getOrderId());
      Reservation.ReleaseCause cause = switch (request.getCause()) {
        // Unset: the fence, which never undoes a confirm (a caller that says nothing cannot free a placed order's stock).
        case RELEASE_CAUSE_UNSPECIFIED, RELEASE_CAUSE_ORDER_REJECTED -> Reservation.ReleaseCause.ORDER_REJECTED;
        case RELEASE_CAUSE_ORDER_CANCELLED -> Reservation.ReleaseCause.ORDER_CANCELLED;
        default -> {
          v.add("cause", "must be RELEASE_CAUSE_ORDER_REJECTED or RELEASE_CAUSE_ORDER_CANCELLED");
          yield null;
        }
      };
      v.throwIfAny();
      return reservations.release(orderId, cause);
    }, ReservationGrpcEndpoint::toProto);
  }

  @Override
  public void getReservation(GetReservationRequest request, StreamObserver<dev.warehouse.inventory.v1.Reservation> observer) {
    UnaryCalls.reply(observer, () -> reservations.get(orderId(request.getOrderId()), request.getConsistentRead()),
        ReservationGrpcEndpoint::toProto);
  }

  @Override
  public void listExpiredHolds(ListExpiredHoldsRequest request, StreamObserver<ListExpiredHoldsResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      PageQuery page = new PageQuery(PageSize.resolve(request.getPageSize(), v), request.getPageToken(), false);
      v.throwIfAny();
      return reservations.listExpiredHolds(page);
    }, ReservationGrpcEndpoint::toProto);
  }

  /** An OUT_OF_STOCK answers its numbers too, in the contract's StockShortages detail. */
  private static Reservation withShortages(Throwable failure) {
    if (Failures.cause(failure) instanceof OutOfStockException out) {
      StockShortages.Builder detail = StockShortages.newBuilder();
      out.shortages().forEach(s -> detail.addShortagesBuilder().setProductId(s.productId()).setWarehouseId(s.warehouseId())
          .setRequested(s.requested()).setAvailable(s.available()));
      throw new FailedPreconditionException(out.reason(), out.getMessage(), out.metadata(), out.violations(),
          List.of(detail.build()));
    }
    throw Failures.cause(failure) instanceof RuntimeException re ? re : new IllegalStateException(failure);
  }

  private static String orderId(String value) {
    Violations v = new Violations();
    String orderId = v.id("order_id", value);
    v.throwIfAny();
    return orderId;
  }

  static dev.warehouse.inventory.v1.Reservation toProto(Reservation r) {
    dev.warehouse.inventory.v1.Reservation.Builder proto = dev.warehouse.inventory.v1.Reservation.newBuilder()
        .setOrderId(r.orderId())
        .setState(dev.warehouse.inventory.v1.ReservationState.valueOf("RESERVATION_STATE_" + r.state().name()))
        .setCreateTime(timestamp(r.createTime()))
        .setUpdateTime(timestamp(r.updateTime()));
    for (ReservationLine line : r.lines()) {
      proto.addLinesBuilder().setProductId(line.productId()).setWarehouseId(line.warehouseId()).setQuantity(line.quantity());
    }
    if (r.state() == Reservation.State.HELD) {
      proto.setHoldExpireTime(timestamp(r.holdExpireTime()));
    }
    r.releaseCause().ifPresent(c -> proto.setReleaseCause(
        dev.warehouse.inventory.v1.ReleaseCause.valueOf("RELEASE_CAUSE_" + c.name())));
    return proto.build();
  }

  static ListExpiredHoldsResponse toProto(Page<Reservation> page) {
    ListExpiredHoldsResponse.Builder response = ListExpiredHoldsResponse.newBuilder().setNextPageToken(page.nextPageToken());
    page.items().forEach(r -> response.addReservations(toProto(r)));
    return response.build();
  }

  private static Timestamp timestamp(Instant instant) {
    return Timestamp.newBuilder().setSeconds(instant.getEpochSecond()).setNanos(instant.getNano()).build();
  }
}
