// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import dev.kpipe.spi.TopicNames;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.metadata.KRaftMetadataCache;

/**
 * Topic names by id from the broker's {@link KRaftMetadataCache} ({@code getTopicName}, as {@code KafkaApis} resolves
 * a produce request's topic ids, KIP-516), remembering the last answer together with the metadata image it came
 * from: a stream of produce requests to one topic costs a reference and a {@link Uuid} comparison per request instead
 * of a look-up in the image's persistent map. An image is immutable and a newer one replaces it as a whole
 * ({@code setImage}), so an answer remembered for the current image is the answer the cache would give.
 *
 * <p>Thread-safe: the last answer is an immutable triple in a plain field (final fields, JLS 17.5); a racing reader
 * sees a whole one or none. Runs on network threads; allocates only when the answer changes.
 */
final class ImageTopicNames implements TopicNames {

    private record Last(MetadataImage image, Uuid id, String name) {}

    private final KRaftMetadataCache cache;
    private Last last;

    /** @param cache the broker's metadata cache */
    ImageTopicNames(KRaftMetadataCache cache) {
        this.cache = cache;
    }

    @Override
    public String topicName(Uuid id) {
        MetadataImage image = cache.currentImage();
        Last l = last;
        if (l != null && l.image == image && l.id.equals(id)) {
            return l.name;
        }
        // getTopicName reads the image again: a newer one than `image` is keyed under the older, so the next call,
        // which sees the newer image, misses and asks again
        String name = cache.getTopicName(id).orElse(null);
        last = new Last(image, id, name);
        return name;
    }
}
