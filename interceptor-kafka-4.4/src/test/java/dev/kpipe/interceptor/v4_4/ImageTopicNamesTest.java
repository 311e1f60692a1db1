// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.metadata.KRaftMetadataCache;
import org.apache.kafka.server.common.KRaftVersion;
import org.junit.jupiter.api.Test;

/** {@link ImageTopicNames} on Kafka's own metadata cache: it answers as {@code getTopicName} does, image by image. */
class ImageTopicNamesTest {

    private final Uuid first = new Uuid(14L, 1L);
    private final Uuid second = new Uuid(14L, 2L);
    private final KRaftMetadataCache cache = new KRaftMetadataCache(1, () -> KRaftVersion.KRAFT_VERSION_1);
    private final ImageTopicNames names = new ImageTopicNames(cache);

    private static MetadataImage apply(MetadataImage image, Object... records) {
        MetadataDelta delta = new MetadataDelta.Builder().setImage(image).build();
        for (Object r : records) {
            if (r instanceof TopicRecord t) {
                delta.replay(t);
            } else {
                delta.replay((RemoveTopicRecord) r);
            }
        }
        return delta.apply(MetadataProvenance.EMPTY);
    }

    @Test
    void followsTheCurrentImage() {
        cache.setImage(
                apply(MetadataImage.EMPTY, new TopicRecord().setName("orders").setTopicId(first)));
        assertEquals("orders", names.topicName(first));
        assertEquals("orders", names.topicName(first));
        assertNull(names.topicName(second));
        assertEquals("orders", names.topicName(first));

        // deleted and created again: a new id for the name, the old id unknown
        cache.setImage(apply(
                cache.currentImage(),
                new RemoveTopicRecord().setTopicId(first),
                new TopicRecord().setName("orders").setTopicId(second)));
        assertNull(names.topicName(first));
        assertEquals("orders", names.topicName(second));
        assertEquals("orders", names.topicName(second));
        for (Uuid id : new Uuid[] {first, second, first, second}) {
            assertEquals(cache.getTopicName(id).orElse(null), names.topicName(id));
        }
    }
}
