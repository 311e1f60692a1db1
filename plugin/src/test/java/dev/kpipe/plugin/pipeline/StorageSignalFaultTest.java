// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kpipe.extension.StoragePressure;
import org.junit.jupiter.api.Test;

/**
 * A storage plugin's callback ({@link StoragePressure}) that throws: an ordinary throwable is a plugin fault, counted
 * and read as {@link StorageSignal#FAULT}; an {@link OutOfMemoryError} (any {@link VirtualMachineError}) is not kpipe's
 * to swallow and goes up to the broker thread, as every {@code catch (Throwable)} of the pipeline package lets it.
 */
class StorageSignalFaultTest {

    @Test
    void aThrowingSourceIsAFaultCounted() {
        PipelineStats stats = new PipelineStats();
        StorageSignal signal = new StorageSignal(stats);
        signal.set(new StoragePressure() {
            @Override
            public boolean saturated() {
                throw new IllegalStateException("the plugin's bug");
            }
        });
        assertEquals(StorageSignal.FAULT, signal.read());
        assertEquals(1, stats.pluginFaults());
    }

    @Test
    void anOutOfMemoryErrorOfTheSourceIsNotSwallowed() {
        PipelineStats stats = new PipelineStats();
        StorageSignal signal = new StorageSignal(stats);
        OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
        signal.set(new StoragePressure() {
            @Override
            public boolean saturated() {
                throw oom;
            }
        });
        assertSame(oom, assertThrows(OutOfMemoryError.class, signal::read));
        assertEquals(0, stats.pluginFaults(), "not a plugin fault: the JVM's");
    }
}
