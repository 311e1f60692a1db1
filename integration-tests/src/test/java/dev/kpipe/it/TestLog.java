// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import java.nio.file.Path;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Gives each test class a log file of its own, so that the console shows the tests and their results: the test JVM's
 * {@code log4j2-test.xml} writes the Kafka clients' lines (the expected retries and disconnections of the fault and
 * transaction tests among them) and the harness's to {@code <kpipe.it.test.logs>/<TestClass>.log}, routed on the system
 * property {@value #CLASS_PROPERTY} that this extension sets before each class; only the harness's warnings also reach
 * the console. When a test or the class fails it prints where that file is.
 *
 * <p>Registered for every test class of this module by JUnit's extension auto-detection ({@code
 * junit-platform.properties} and {@code META-INF/services}). Test classes run one after another in a test JVM (failsafe
 * and surefire: one fork, no parallel execution), so one JVM-wide property names the running class; lines logged after
 * a class ends (a client closing late) go to its file until the next class starts.
 */
public final class TestLog implements BeforeAllCallback, AfterAllCallback, TestWatcher {
    /** System property: the simple name of the test class running now, set by this extension. */
    public static final String CLASS_PROPERTY = "kpipe.it.test.class";
    /** System property: the folder of the per-class files (the build sets it per failsafe execution). */
    public static final String DIR_PROPERTY = "kpipe.it.test.logs";

    /** Creates the extension; JUnit does this. */
    public TestLog() {}

    @Override
    public void beforeAll(ExtensionContext context) {
        System.setProperty(CLASS_PROPERTY, name(context));
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        System.err.println("kpipe-it: " + name(context) + "." + context.getDisplayName() + " failed; the clients' and"
                + " the harness's log lines of " + name(context) + ": " + file(name(context)));
    }

    /** A failure of the class itself (its cluster or container did not start, say): where its lines are. */
    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getExecutionException().isPresent()
                && context.getTestMethod().isEmpty()) {
            System.err.println("kpipe-it: " + name(context) + " failed; the clients' and the harness's log lines of "
                    + name(context) + ": " + file(name(context)));
        }
    }

    /**
     * @param testClass a test class's simple name
     * @return the file its lines go to
     */
    public static Path file(String testClass) {
        return Path.of(System.getProperty(DIR_PROPERTY, "target/test-logs"))
                .resolve(testClass + ".log")
                .toAbsolutePath();
    }

    private static String name(ExtensionContext context) {
        Class<?> c = context.getRequiredTestClass();
        while (c.getEnclosingClass() != null) {
            c = c.getEnclosingClass();
        }
        return c.getSimpleName();
    }
}
