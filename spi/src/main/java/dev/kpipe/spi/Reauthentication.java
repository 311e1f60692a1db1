// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * A SASL re-authentication (KIP-368) the broker is about to begin on a connection, offered to the plugin by
 * {@link NetworkEventListener#onReauthentication}: an opaque handle the broker's network layer creates and the plugin
 * hands back, unchanged, to {@link NetworkProcessor#beginReauthentication}. It holds the broker's own state (the channel,
 * the client's handshake, the clock); a plugin never looks inside.
 */
public interface Reauthentication {}
