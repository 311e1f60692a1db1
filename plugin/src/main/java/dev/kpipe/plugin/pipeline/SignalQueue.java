// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * The handler-to-network-thread signal of one processor: the connections whose situation another thread changed (a
 * handler dispatched their request, the byte budget admitted them, kpipe was disabled), for the processor's network
 * thread to evaluate at its next round. Intrusive, so that a signal allocates nothing: each connection is its own node
 * ({@link Node#signalNext}) and is listed at most once at a time ({@link Node#signalled});
 * a connection signalled again before the network thread took it is evaluated once for both, as its evaluation looks
 * at its whole state anyway.
 *
 * <p>Invariants: a connection is listed at most once; every signal is followed by an evaluation that starts after it
 * (a signal that finds its connection listed happened before the network thread unlists it, which it does before the
 * evaluation); connections are taken in the order they were first signalled. A Treiber stack that the network thread
 * takes whole and reverses.
 *
 * <p>Thread: {@link #add} any thread, lock-free; every other method the processor's network thread.
 */
final class SignalQueue<C extends SignalQueue.Node<C>> {

    private static final VarHandle HEAD;
    private static final VarHandle SIGNALLED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(SignalQueue.class, "head", Node.class);
            SIGNALLED = l.findVarHandle(Node.class, "signalled", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A connection as an element of a processor's signal list: its link and its listed flag, which only {@link
     * SignalQueue} reads and writes ({@link ConnectionPipeline} extends it, so that a signal allocates nothing).
     */
    abstract static class Node<C extends Node<C>> {
        /** 1 while listed, else 0; compare-and-set by any thread through {@link #SIGNALLED}. */
        @SuppressWarnings("unused") // accessed through SIGNALLED
        private int signalled;
        /** The next connection in the list; {@code null} when not listed. */
        private C signalNext;
    }

    /** The connections signalled since the network thread last took them, newest first. */
    @SuppressWarnings("unused") // accessed through HEAD
    private volatile C head;
    /** Taken from {@link #head} and not handed out yet, oldest first. Network thread only. */
    private C taken;

    /**
     * SignalQueue a connection: its network thread evaluates it at its next round. Thread: any; lock-free; allocates
     * nothing. The caller wakes the processor.
     *
     * @param conn the connection
     */
    void add(C conn) {
        if (!SIGNALLED.compareAndSet(conn, 0, 1)) {
            return; // listed: its network thread has not taken it yet
        }
        C h;
        do {
            h = head();
            ((Node<C>) conn).signalNext = h;
        } while (!HEAD.compareAndSet(this, h, conn));
    }

    /** @return the connection signalled first of those listed, unlisted now; {@code null} if none. Network thread. */
    C poll() {
        C c = taken;
        if (c == null) {
            C stack = takeAll();
            // reverse: oldest first (the nodes are flagged: no other thread writes their links now)
            while (stack != null) {
                C next = ((Node<C>) stack).signalNext;
                ((Node<C>) stack).signalNext = c;
                c = stack;
                stack = next;
            }
            if (c == null) {
                return null;
            }
        }
        taken = ((Node<C>) c).signalNext;
        ((Node<C>) c).signalNext = null;
        SIGNALLED.setVolatile(c, 0); // after reading its link: a signal from now on lists it again
        return c;
    }

    /**
     * @param conn a connection
     * @return true if it is listed in a signal list (flagged, or linked); for tests
     */
    static boolean listed(Node<?> n) {
        return n.signalled != 0 || n.signalNext != null;
    }

    /** @return true if no connection is listed. Network thread (or a test that drives it). */
    boolean isEmpty() {
        return taken == null && HEAD.getVolatile(this) == null;
    }

    /** @return how many connections are listed. Network thread (or a test). */
    int size() {
        int n = 0;
        for (C c = taken; c != null; c = ((Node<C>) c).signalNext) {
            n++;
        }
        for (C c = head(); c != null; c = ((Node<C>) c).signalNext) {
            n++;
        }
        return n;
    }

    /**
     * @param action called for each listed connection, the taken ones oldest first, then the others newest first.
     *     Network thread (or a test); for dumps.
     */
    void forEach(Consumer<C> action) {
        for (C c = taken; c != null; c = ((Node<C>) c).signalNext) {
            action.accept(c);
        }
        for (C c = head(); c != null; c = ((Node<C>) c).signalNext) {
            action.accept(c);
        }
    }

    @SuppressWarnings("unchecked") // HEAD holds only nodes of this list's type
    private C head() {
        return (C) HEAD.getVolatile(this);
    }

    @SuppressWarnings("unchecked") // HEAD holds only nodes of this list's type
    private C takeAll() {
        return (C) HEAD.getAndSet(this, (Node<C>) null);
    }
}
