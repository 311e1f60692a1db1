// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * Read-only services of the broker that become available once its request handlers run, told once by
 * {@link NetworkEventListener#onBrokerServices}. Both are the broker's own (its metadata cache and its queues), so they
 * work in KRaft and ZooKeeper mode.
 *
 * @param topicNames resolves topic ids to names (PRODUCE v13+ names topics by id, KIP-516)
 * @param load the broker's request queue and produce purgatory gauges
 */
public record BrokerServices(TopicNames topicNames, BrokerLoad load) {}
