// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.underreplication;

/**
 * What {@link UnderReplicationPressure} shows in JMX as {@value UnderReplicationPressure#MBEAN}. Thread: any; every
 * attribute is a moment's value.
 */
public interface UnderReplicationPressureMBean {

    /** @return the topics reported saturated now, sorted */
    String[] getSaturatedTopics();

    /** @return the polls that read the gauges since the source started */
    long getPolls();

    /** @return the polls in which at least one topic recovered (each ran the wake-up listener once) */
    long getClears();

    /** @return when the last such poll ran the wake-up listener, epoch ms (the wall clock); -1 before the first */
    long getLastClearedEpochMs();

    /** @return polls that could not read the gauges, and wake-up listeners that threw */
    long getFaults();
}
