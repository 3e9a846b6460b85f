package org.shardline;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a {@link Coordinator} over asynchronous hosts: every transport, lease and store call
 * returns a {@link CompletionStage}, and no call of this class waits for one. Answers are
 * taken, and timers fire, on the {@link ScheduledExecutorService} the host passes.
 *
 * <p>The coordinator's ordering rules hold across the stages: no call after a store write (an
 * acknowledgement, a hand-off directive) is made before that write's stage has completed.
 * Inputs and queries are taken meanwhile; the caller never waits for a stage.
 *
 * <p>A stage that completes exceptionally counts as an unreachable backend: the coordinator
 * carries on as the synchronous driver does after a failed callback, and the exception is kept
 * for {@link #takeErrors()}. Notices (decision events included) go to the listeners added with
 * {@link #onNotice} as they happen. Queries are {@link AbstractCoordinator}'s. Close it to stop
 * its timers; stages completing after that are ignored.
 */
public final class AsyncCoordinatorDriver extends AbstractCoordinator {
  private final AsyncTransport transport;
  private final AsyncLease lease;
  private final AsyncStore store;
  private final Clock clock;
  private final ScheduledExecutorService executor;
  private final List<Consumer<Notice>> listeners = new CopyOnWriteArrayList<>();
  private final List<Throwable> errors = new ArrayList<>();
  private final List<CompletableFuture<Void>> idleWaiters = new ArrayList<>();
  private ScheduledFuture<?> timer;
  private long timerAt = -1;

  /** {@code coordinator} is moved into the driver; the Coordinator object is retired. */
  public AsyncCoordinatorDriver(
      Coordinator coordinator,
      AsyncTransport transport,
      AsyncLease lease,
      AsyncStore store,
      Clock clock,
      ScheduledExecutorService executor) {
    super(
        take(coordinator, transport, lease, store, clock, executor),
        AsyncCoordinatorDriver::nFree,
        "AsyncCoordinatorDriver",
        2);
    this.transport = transport;
    this.lease = lease;
    this.store = store;
    this.clock = clock;
    this.executor = executor;
  }

  /** Checks every argument before the coordinator is taken, so a refused call leaves it usable. */
  private static long take(Coordinator coordinator, Object... hosts) {
    Objects.requireNonNull(coordinator, "coordinator");
    String[] names = {"transport", "lease", "store", "clock", "executor"};
    for (int i = 0; i < hosts.length; i++) Objects.requireNonNull(hosts[i], names[i]);
    long h = coordinator.callLong(AsyncCoordinatorDriver::nNew);
    coordinator.retire("handed to an AsyncCoordinatorDriver");
    return h;
  }

  /** Calls {@code listener} with every notice, on the thread that produced it. */
  public void onNotice(Consumer<Notice> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  public void start() {
    step(-1, null, null, 0);
  }

  public void receive(Envelope e) {
    step(0, null, e.flat(), 0);
  }

  public void member(Member m) {
    synchronized (this) {
      run(h -> nMember(h, clock.nowMs(), m.fields(), m.upNumber()));
    }
    pump();
  }

  public void memberRemoved(String address) {
    step(1, address, null, 0);
  }

  public void reachability(String address, boolean reachable) {
    step(2, address, null, reachable ? 1 : 0);
  }

  public void regionTerminated(String region) {
    step(3, region, null, 0);
  }

  /** The lease backend reports the current grant lost. */
  public void leaseLost() {
    OptionalLong t = token();
    if (t.isPresent()) step(8, null, null, t.getAsLong());
  }

  public void preparingForShutdown() {
    step(12, null, null, 0);
  }

  public void stop() {
    step(13, null, null, 0);
  }

  /** Host calls made and not answered yet. */
  public int inFlight() {
    return callInt(AsyncCoordinatorDriver::nInFlight);
  }

  /** Completes once no host call is in flight (at once if none is). */
  public CompletionStage<Void> whenIdle() {
    CompletableFuture<Void> f = new CompletableFuture<>();
    synchronized (this) {
      idleWaiters.add(f);
    }
    pump();
    return f;
  }

  /** The failures kept since the last call: exceptional stages and answers that did not fit. */
  public synchronized List<Throwable> takeErrors() {
    List<Throwable> out = List.copyOf(errors);
    errors.clear();
    return out;
  }

  private void step(int kind, String a, byte[] c, long x) {
    synchronized (this) {
      run(h -> nStep(h, clock.nowMs(), kind, a, c, x));
    }
    pump();
  }

  /**
   * Makes every call the coordinator has ready, hands out its notices and sets the timer. Calls
   * are made in order under the lock; their stages complete on the executor, never inside.
   */
  private void pump() {
    List<Notice> notices;
    synchronized (this) {
      if (isClosed()) return;
      long now = clock.nowMs();
      for (Object row = call(h -> nNextCall(h, now)); row != null; row = call(h -> nNextCall(h, now))) {
        List<?> r = (List<?>) row;
        launch((Long) r.get(0), (String) r.get(1), (List<?>) r.get(2));
      }
      Rows.Scratch s = Rows.scratch();
      notices = Rows.notices(s.rows(call(h -> nTakeNotices(h, s.address, s.capacity))));
      if (!idleWaiters.isEmpty() && inFlight() == 0) {
        idleWaiters.forEach(f -> f.complete(null));
        idleWaiters.clear();
      }
      schedule(nextDeadline());
    }
    for (Notice n : notices) {
      for (Consumer<Notice> l : listeners) l.accept(n);
    }
  }

  private void schedule(OptionalLong deadline) {
    long at = deadline.orElse(-1);
    if (at == timerAt) return;
    if (timer != null) timer.cancel(false);
    timerAt = at;
    timer =
        at < 0
            ? null
            : executor.schedule(this::fire, Math.max(0, at - clock.nowMs()), TimeUnit.MILLISECONDS);
  }

  private void fire() {
    synchronized (this) {
      if (isClosed()) return;
      timerAt = -1;
      timer = null;
      if (!due()) {
        schedule(nextDeadline());
        return;
      }
      run(h -> nStep(h, clock.nowMs(), -2, null, null, 0));
    }
    pump();
  }

  private boolean due() {
    OptionalLong d = nextDeadline();
    return d.isPresent() && d.getAsLong() <= clock.nowMs();
  }

  private void launch(long ticket, String method, List<?> args) {
    CompletionStage<?> stage;
    try {
      stage = call(method, args);
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    if (stage == null) {
      stage = CompletableFuture.failedFuture(
          new ShardlineException(Status.CALLBACK_FAILED, method + " returned null, not a stage"));
    }
    stage.whenCompleteAsync((value, failure) -> answer(ticket, method, value, failure), executor);
  }

  private CompletionStage<?> call(String method, List<?> args) {
    switch (method) {
      case "send":
        return transport.send(new Envelope((byte[]) args.get(0)));
      case "acquire":
        return lease.acquire((Long) args.get(0));
      case "renew":
        return lease.renew((Long) args.get(0), (Long) args.get(1));
      case "release":
        return lease.release((Long) args.get(0));
      case "append":
        return store.append((Long) args.get(0), (String) args.get(1));
      case "saveSnapshot":
        return store.saveSnapshot((Long) args.get(0), (String) args.get(1));
      case "load":
        return store.load((Long) args.get(0));
      default:
        throw new IllegalStateException("no host method " + method);
    }
  }

  /** The stage's value in the form every language answers with (see pipeline.rs). */
  private static Object answerOf(String method, Object value) {
    if (value == null) {
      if (method.equals("send") || method.equals("release")) return null;
      throw new ShardlineException(
          Status.CALLBACK_FAILED, method + "'s stage completed with null; complete with an empty Optional");
    }
    if (value instanceof Optional<?> o) {
      return o.map(v -> v instanceof LeaseGrant g ? List.of(g.token(), g.validUntilMs()) : v).orElse(null);
    }
    if (value instanceof OptionalLong l) return l.isPresent() ? l.getAsLong() : null;
    if (value instanceof WriteOutcome w) {
      return Callbacks.outcome(w, method);
    }
    return value;
  }

  private void answer(long ticket, String method, Object value, Throwable failure) {
    if (failure instanceof CompletionException && failure.getCause() != null) {
      failure = failure.getCause();
    }
    Object a = null;
    if (failure == null) {
      try {
        a = answerOf(method, value);
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    Object answer = a;
    synchronized (this) {
      if (isClosed()) return;
      long now = clock.nowMs();
      if (failure != null) errors.add(failure);
      try {
        if (failure != null) {
          run(h -> nFail(h, now, ticket));
        } else {
          // An answer that does not fit completes the call as failed and throws, naming it.
          run(h -> nAnswer(h, now, ticket, answer));
        }
      } catch (RuntimeException e) {
        errors.add(e);
      }
    }
    pump();
  }

  private static native long nNew(long coordinator);

  private static native void nFree(long h);

  private static native void nStep(long h, long nowMs, int kind, String a, byte[] c, long x);

  private static native void nMember(long h, long nowMs, String[] fields, int upNumber);

  private static native Object nNextCall(long h, long nowMs);

  private static native void nAnswer(long h, long nowMs, long ticket, Object value);

  private static native void nFail(long h, long nowMs, long ticket);

  private static native int nInFlight(long h);

  private static native byte[] nTakeNotices(long h, long at, int capacity);
}
