// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * A plugin's own state for one network processor, attached with {@link NetworkProcessor#attach} so that the plugin
 * finds it from any event of that processor without a look-up (Kafka's {@code SelectionKey.attach} plays the same
 * role for a channel). The broker never looks inside.
 */
public interface ProcessorAttachment {}
