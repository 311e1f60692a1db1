// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/** A listener that takes every connection over and does nothing else: the base of the broken ones of the tests. */
class PipelineEverything implements NetworkEventListener<FakeRequest, FakeResponse> {
    @Override
    public Admission onRequestRead(
            NetworkProcessor<FakeRequest, FakeResponse> processor,
            FakeRequest request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        return Admission.PIPELINED;
    }
}
