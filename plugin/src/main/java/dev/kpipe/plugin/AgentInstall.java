// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.Optional;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import net.bytebuddy.agent.ByteBuddyAgent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How kpipe gets the broker JVM's {@link Instrumentation}: from {@code -javaagent:<kpipe jar>} (install mode {@code
 * javaagent}, the README's documented install), else by attaching its own jar to the running JVM (install mode {@code
 * attach}, the zero-touch fallback), where the JVM allows that.
 *
 * <p>Before attaching it reads the JVM's own options (HotSpot's {@code DisableAttachMechanism} and {@code
 * EnableDynamicAgentLoading}, through {@link HotSpotDiagnosticMXBean}) and decides with {@link #verdict}: a JVM that
 * forbids attach or dynamic agent loading is not tried at all (the caller logs one ERROR naming the option); on a JVM
 * that prints JEP 451's warning for an agent loaded at runtime (JDK 21 and later, unless started with {@code
 * -XX:+EnableDynamicAgentLoading}) kpipe still attaches and returns one line for the broker log saying what to add.
 */
final class AgentInstall {

    private static final Logger LOG = LoggerFactory.getLogger(AgentInstall.class);

    /** The first Java feature release that warns about an agent loaded at runtime (JEP 451). */
    static final int FIRST_WARNING_JAVA = 21;

    private AgentInstall() {}

    /** What loading kpipe into this running JVM (self-attach) meets. */
    enum Verdict {
        /** Loaded without a word: JDK 17 to 20, or JDK 21+ started with {@code -XX:+EnableDynamicAgentLoading}. */
        SILENT,
        /** Loaded, and the JVM prints JEP 451's multi-line warning on its standard error (JDK 21+, option at default). */
        WARNS,
        /** Refused: the JVM was started with {@code -XX:+DisableAttachMechanism}. */
        ATTACH_DISABLED,
        /** Refused: the JVM was started with {@code -XX:-EnableDynamicAgentLoading} (JEP 451). */
        LOADING_DISABLED
    }

    /**
     * The JVM options that decide self-attach.
     *
     * @param attachDisabled {@code DisableAttachMechanism} is true
     * @param dynamicLoadingEnabled {@code EnableDynamicAgentLoading} is true (also when the JVM has no such option)
     * @param dynamicLoadingDefault {@code EnableDynamicAgentLoading} was left at its default (nobody set it)
     */
    record JvmOptions(boolean attachDisabled, boolean dynamicLoadingEnabled, boolean dynamicLoadingDefault) {}

    /** An instrumentation and how it was obtained. */
    record Agent(Instrumentation instrumentation, String mode, Optional<String> advice) {}

    /**
     * Decides what self-attach meets (JEP 451: from JDK 21 an agent loaded into a running JVM makes the JVM print a
     * warning unless {@code EnableDynamicAgentLoading} was set on its command line, and is refused when it was set to
     * false; JDK 17 updates that know the option refuse as well, without warning otherwise).
     *
     * @param javaFeature the JVM's feature release, e.g. 17 or 25 ({@link Runtime.Version#feature()})
     * @param options its options
     * @return the verdict
     */
    static Verdict verdict(int javaFeature, JvmOptions options) {
        if (options.attachDisabled()) {
            return Verdict.ATTACH_DISABLED;
        }
        if (!options.dynamicLoadingEnabled()) {
            return Verdict.LOADING_DISABLED;
        }
        return javaFeature >= FIRST_WARNING_JAVA && options.dynamicLoadingDefault() ? Verdict.WARNS : Verdict.SILENT;
    }

    /**
     * Returns the instrumentation from {@code -javaagent} if the JVM started kpipe's agent, else attaches kpipe to this
     * JVM where its options allow it. Thread: the installing thread.
     *
     * @return the instrumentation, the install mode ({@code javaagent} or {@code attach}) and, where the JVM warned
     *     about the attach, the one line kpipe logs about it
     * @throws UnsupportedBrokerException if the JVM forbids attach or dynamic agent loading, or attaching failed; the
     *     message says to use {@code -javaagent}
     */
    static Agent obtain() throws UnsupportedBrokerException {
        Instrumentation inst = KpipeAgent.instrumentation();
        if (inst != null) {
            return new Agent(inst, "javaagent", Optional.empty());
        }
        File jar = ownJar();
        String javaagent = "-javaagent:" + (jar != null ? jar.getPath() : "<kpipe jar>");
        int feature = Runtime.version().feature();
        Verdict verdict = verdict(feature, currentOptions(feature));
        switch (verdict) {
            case ATTACH_DISABLED ->
                throw new UnsupportedBrokerException(
                        "kpipe cannot attach to the broker JVM: it was started with -XX:+DisableAttachMechanism; start it"
                                + " with " + javaagent + " in KAFKA_OPTS");
            case LOADING_DISABLED ->
                throw new UnsupportedBrokerException(
                        "kpipe cannot attach to the broker JVM: it was started with -XX:-EnableDynamicAgentLoading"
                                + " (JEP 451); start it with " + javaagent + " in KAFKA_OPTS");
            default -> {}
        }
        try {
            inst = attach(jar);
        } catch (RuntimeException e) {
            throw new UnsupportedBrokerException("kpipe cannot attach to the broker JVM (" + e.getMessage()
                    + "); start it with " + javaagent + " in KAFKA_OPTS");
        }
        Optional<String> advice = verdict == Verdict.WARNS
                ? Optional.of("kpipe attached itself to the broker JVM (install mode attach), for which Java " + feature
                        + " prints a warning on standard error about a dynamically loaded agent (JEP 451; a later Java"
                        + " refuses it by default): add " + javaagent + " to KAFKA_OPTS to install kpipe at start-up"
                        + " instead")
                : Optional.empty();
        return new Agent(inst, "attach", advice);
    }

    /**
     * Reads the options from the platform's {@link HotSpotDiagnosticMXBean}. A JVM without the bean, or without an
     * option (JDK 17 builds before {@code EnableDynamicAgentLoading}), reads as its default behaviour.
     */
    private static JvmOptions currentOptions(int feature) {
        HotSpotDiagnosticMXBean hotspot;
        try {
            hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        } catch (RuntimeException | LinkageError e) {
            hotspot = null;
        }
        if (hotspot == null) {
            return new JvmOptions(false, true, true);
        }
        Optional<VMOption> attach = option(hotspot, "DisableAttachMechanism");
        Optional<VMOption> loading = option(hotspot, "EnableDynamicAgentLoading");
        return new JvmOptions(
                attach.map(o -> Boolean.parseBoolean(o.getValue())).orElse(false),
                loading.map(o -> Boolean.parseBoolean(o.getValue())).orElse(true),
                loading.map(o -> o.getOrigin() == VMOption.Origin.DEFAULT).orElse(true));
    }

    private static Optional<VMOption> option(HotSpotDiagnosticMXBean hotspot, String name) {
        try {
            return Optional.ofNullable(hotspot.getVMOption(name));
        } catch (IllegalArgumentException | SecurityException e) {
            return Optional.empty(); // not an option of this JVM
        }
    }

    /**
     * Attaches kpipe's own jar (its manifest names {@link KpipeAgent} as {@code Agent-Class}) to this JVM through the
     * JDK attach API (Byte Buddy's {@link ByteBuddyAgent#attach}, in a helper process when the JVM forbids attaching
     * to itself), and returns the {@link Instrumentation} the JVM passes to {@link KpipeAgent#agentmain}. Attaching the
     * jar that is already in the broker's {@code libs/} writes no file: {@link ByteBuddyAgent#install()} would write
     * a temporary agent jar into {@code java.io.tmpdir}, which a broker killed with SIGKILL leaves behind. Falls back
     * to {@link ByteBuddyAgent#install()} where kpipe's classes do not come from its jar (unit tests), were loaded by
     * another class loader than the system one (the JVM would run {@code agentmain} on a second copy of kpipe), the
     * jar's path cannot be passed to the JVM as an agent (it contains {@code =}), or attaching the jar fails.
     *
     * @param jar kpipe's own jar, or {@code null} if it has none usable as an agent ({@link #ownJar()})
     * @return the JVM's instrumentation
     * @throws IllegalStateException if the JVM cannot be attached to
     */
    private static Instrumentation attach(File jar) {
        if (jar != null) {
            try {
                ByteBuddyAgent.attach(
                        jar, String.valueOf(ProcessHandle.current().pid()));
                Instrumentation inst = KpipeAgent.instrumentation();
                if (inst != null) {
                    return inst;
                }
            } catch (RuntimeException e) {
                LOG.debug("kpipe: attaching {} failed; attaching Byte Buddy's agent instead", jar, e);
            }
        }
        return ByteBuddyAgent.install();
    }

    /**
     * @return the jar kpipe's classes were loaded from, if the system class loader loaded them from a readable file
     *     naming {@link KpipeAgent} as agent; else {@code null}
     */
    static File ownJar() {
        if (KpipeAgent.class.getClassLoader() != ClassLoader.getSystemClassLoader()) {
            return null;
        }
        try {
            CodeSource source = KpipeAgent.class.getProtectionDomain().getCodeSource();
            if (source == null
                    || source.getLocation() == null
                    || !"file".equals(source.getLocation().getProtocol())) {
                return null;
            }
            File file = new File(source.getLocation().toURI());
            // the JVM reads "<jar>=<options>": a path with '=' cannot name an agent jar
            if (!file.isFile() || file.getPath().indexOf('=') >= 0) {
                return null;
            }
            try (JarFile jar = new JarFile(file)) {
                Manifest manifest = jar.getManifest();
                return manifest != null
                                && KpipeAgent.class
                                        .getName()
                                        .equals(manifest.getMainAttributes().getValue("Agent-Class"))
                        ? file
                        : null;
            }
        } catch (IOException | URISyntaxException | SecurityException | IllegalArgumentException e) {
            return null;
        }
    }
}
