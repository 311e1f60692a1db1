// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservation;
import dev.kpipe.backpressure.ReservationHolders;
import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * What the fake broker's checks read of kpipe's private state, by reflection: the production classes hand out no
 * mutable part ({@link ConnectionPipeline} and {@link ProcessorPipelines} own theirs), so the tests look without a
 * getter. Read only; the one test that takes a callback's effects back says so where it does.
 */
final class Internals {
    private static final Field RESERVATION = field(ConnectionPipeline.class, "reservation");
    private static final Field DISPATCH = field(ConnectionPipeline.class, "dispatch");
    private static final Field LARGEST_REQUEST = field(ConnectionPipeline.class, "largestRequest");
    private static final Field HOLDERS = field(ProcessorPipelines.class, "holders");
    private static final Field SIGNALLED = field(ProcessorPipelines.class, "signalled");
    private static final Field READY = field(ProcessorPipelines.class, "ready");
    private static final Field PENDING = field(ProcessorPipelines.class, "pending");
    private static final Field PRESSURE_BLOCKED = field(ProcessorPipelines.class, "pressureBlocked");

    private Internals() {}

    /** @return the connection's reservation of the byte budget */
    static Reservation reservation(ConnectionPipeline<?, ?> cp) {
        return (Reservation) read(RESERVATION, cp);
    }

    /** @return the processor's reservation holders */
    static ReservationHolders holders(ProcessorPipelines<?, ?> pp) {
        return (ReservationHolders) read(HOLDERS, pp);
    }

    /** @return the processor's queue of connections signalled by other threads */
    @SuppressWarnings("unchecked")
    static <Q, S> SignalQueue<ConnectionPipeline<Q, S>> signalled(ProcessorPipelines<Q, S> pp) {
        return (SignalQueue<ConnectionPipeline<Q, S>>) read(SIGNALLED, pp);
    }

    /** @return the processor's released responses */
    static ArrayDeque<?> ready(ProcessorPipelines<?, ?> pp) {
        return (ArrayDeque<?>) read(READY, pp);
    }

    /** @return the processor's connections queued for evaluation */
    @SuppressWarnings("unchecked")
    static <Q, S> ArrayList<ConnectionPipeline<Q, S>> pending(ProcessorPipelines<Q, S> pp) {
        return (ArrayList<ConnectionPipeline<Q, S>>) read(PENDING, pp);
    }

    /** @return the processor's connections kept muted by storage-side saturation */
    @SuppressWarnings("unchecked")
    static <Q, S> ArrayList<ConnectionPipeline<Q, S>> pressureBlocked(ProcessorPipelines<Q, S> pp) {
        return (ArrayList<ConnectionPipeline<Q, S>>) read(PRESSURE_BLOCKED, pp);
    }

    /** @return the request in the connection's dispatch phase, or {@code null} */
    static Object dispatchRequest(ConnectionPipeline<?, ?> cp) {
        return ((DispatchPhase) read(DISPATCH, cp)).request();
    }

    /** @return the largest request read on the connection so far, bytes: what its next read reserves */
    static int largestRequest(ConnectionPipeline<?, ?> cp) {
        return (Integer) read(LARGEST_REQUEST, cp);
    }

    private static Field field(Class<?> type, String name) {
        try {
            Field f = type.getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static Object read(Field f, Object o) {
        try {
            return f.get(o);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }
}
