// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.watchdog;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;

/**
 * Ends a JVM once the process that started it is gone, however that one ended (SIGKILL, a crash, an IDE's stop button,
 * a script stopping Maven), so that no broker outlives its launcher and keeps its ports.
 *
 * <p>Two users: the harness starts every broker, controller and ZooKeeper JVM through {@link #main} (the JVM's main
 * class, followed by the real one and its arguments, with {@code -D}{@value #PARENT_PID} naming the harness JVM); and
 * the cluster CLI calls {@link #watch} on the Maven process it runs under ({@code --exit-with-parent}). The JVM then
 * exits as on SIGTERM (its shutdown hooks run: Kafka's stops the broker, the harness's stops its clusters), and is
 * halted if that takes longer than {@value #GRACE_MS} ms.
 *
 * <p>The harness copies this class alone onto a child JVM's class path: it uses only the JDK and has no nested
 * classes. Thread-safe; each watch is one daemon thread polling every {@value #PERIOD_MS} ms.
 */
public final class ParentWatchdog {
    /** System property of a child JVM: the process id of the JVM that started it. */
    public static final String PARENT_PID = "kpipe.it.parent.pid";
    /** How often the watched process is looked at, in ms. */
    static final long PERIOD_MS = 500;
    /** How long the shutdown hooks may run after the watched process ended before the JVM is halted, in ms. */
    static final long GRACE_MS = 10_000;

    private ParentWatchdog() {}

    /**
     * Watches the process {@value #PARENT_PID} names (if set), then runs the main class given as first argument with the
     * remaining arguments, in this thread.
     *
     * @param args the main class to run, then its arguments
     * @throws Throwable what the main method throws
     */
    public static void main(String[] args) throws Throwable {
        if (args.length == 0) {
            System.err.println(
                    "usage: java -D" + PARENT_PID + "=PID " + ParentWatchdog.class.getName() + " MAIN_CLASS [ARG]...");
            System.exit(2);
        }
        String pid = System.getProperty(PARENT_PID);
        if (pid != null) {
            watch(Long.parseLong(pid.trim()), "the JVM that started it (pid " + pid.trim() + ")");
        }
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * Starts a daemon thread that, once process {@code pid} has ended, prints one line to stderr and exits this JVM with
     * status 1 (shutdown hooks run), halting it if they take more than {@value #GRACE_MS} ms. A process that is already
     * gone counts as ended; a reused process id does not keep the watch going ({@link ProcessHandle#isAlive()} compares
     * start times).
     *
     * @param pid the process whose end ends this JVM
     * @param what how to name it in the line printed
     */
    public static void watch(long pid, String what) {
        Optional<ProcessHandle> watched = ProcessHandle.of(pid);
        Thread watch = new Thread(
                () -> {
                    try {
                        while (watched.isPresent() && watched.get().isAlive()) {
                            Thread.sleep(PERIOD_MS);
                        }
                    } catch (InterruptedException e) {
                        return; // nobody interrupts this thread; if someone does, stop watching
                    }
                    System.err.println("kpipe-it: " + what + " is gone; this JVM (pid "
                            + ProcessHandle.current().pid() + ") exits");
                    Thread halt = new Thread(
                            () -> {
                                try {
                                    Thread.sleep(GRACE_MS);
                                } catch (InterruptedException e) {
                                    // halt now
                                }
                                System.err.println(
                                        "kpipe-it: shutdown hooks still running after " + GRACE_MS + " ms; halting");
                                Runtime.getRuntime().halt(1);
                            },
                            "kpipe-it-parent-watchdog-halt");
                    halt.setDaemon(true);
                    halt.start();
                    System.exit(1);
                },
                "kpipe-it-parent-watchdog");
        watch.setDaemon(true);
        watch.start();
    }
}
