// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import dev.kpipe.spi.ResponseKind;

/**
 * A response of a {@link FakeProcessor} to one {@link FakeRequest}, compared by identity as the SPI compares the
 * broker's. Immutable; thread: any.
 *
 * @param request the request it answers
 * @param kind its kind
 */
public record FakeResponse(FakeRequest request, ResponseKind kind) {
    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return kind + " response to " + request;
    }
}
