// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.faults;

import dev.kpipe.extension.StoragePressure;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMException;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import org.apache.kafka.common.Configurable;

/**
 * Fault injection through a real kpipe plug point: a {@link StoragePressure} (named in {@code
 * kpipe.storage.pressure.class}, loaded from a jar in the broker's {@code libs/}) whose {@link #saturated()} throws an
 * {@link IllegalStateException} on every n-th call ({@value #EVERY}, default 7) and otherwise reports no saturation.
 * It counts its calls and the faults it threw, in JMX as {@value #MBEAN} (attributes {@code Calls}, {@code Faults}),
 * so that a test can compare them with kpipe's {@code plugin-fault-total}.
 *
 * <p>Thread-safe: kpipe calls it from every network thread.
 */
public final class FaultyStoragePressure implements StoragePressure, Configurable {
    /** The broker setting holding n. */
    public static final String EVERY = "kpipe.it.fault.every";
    /** Where the counts are in JMX. */
    public static final String MBEAN = "kpipe.it:type=fault-injector";

    /** The counts, as a standard MBean. */
    public interface CountsMBean {
        /** @return calls of {@link #saturated()} so far */
        long getCalls();

        /** @return faults thrown so far */
        long getFaults();
    }

    private final AtomicLong calls = new AtomicLong();
    private final AtomicLong faults = new AtomicLong();
    private volatile long every = 7;

    @Override
    public void configure(Map<String, ?> configs) {
        Object v = configs.get(EVERY);
        if (v != null) {
            every = Long.parseLong(v.toString().trim());
        }
        try {
            ObjectName name = new ObjectName(MBEAN);
            if (!ManagementFactory.getPlatformMBeanServer().isRegistered(name)) {
                ManagementFactory.getPlatformMBeanServer()
                        .registerMBean(
                                new StandardMBean(
                                        new CountsMBean() {
                                            @Override
                                            public long getCalls() {
                                                return calls.get();
                                            }

                                            @Override
                                            public long getFaults() {
                                                return faults.get();
                                            }
                                        },
                                        CountsMBean.class),
                                name);
            }
        } catch (JMException e) {
            throw new IllegalStateException("cannot register " + MBEAN, e);
        }
    }

    @Override
    public boolean saturated() {
        long n = calls.incrementAndGet();
        if (every > 0 && n % every == 0) {
            long k = faults.incrementAndGet();
            throw new IllegalStateException("injected storage pressure fault #" + k);
        }
        return false;
    }
}
