// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

/**
 * The running broker lacks a hook point kpipe needs (an unsupported Kafka version, or a build whose
 * network classes differ). Nothing was changed in the broker when this is thrown.
 */
public final class UnsupportedBrokerException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message names the Kafka version and the missing hook point */
    public UnsupportedBrokerException(String message) {
        super(message);
    }
}
