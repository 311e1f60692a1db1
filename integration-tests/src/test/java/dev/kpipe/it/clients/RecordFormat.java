// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

/**
 * The records every client test writes: record {@code seq} has the key {@code "<seq>"} (decimal) and the value
 * {@link #value(long)}. ASCII only and without {@code ':'}, so the same records can be fed to kcat as {@code key:value}
 * lines; {@code clients/kafkajs-produce.js} builds the same values. Uses no Kafka class: the Kafka 3.9 child JVM
 * ({@link Java39Client}) loads it too.
 */
public final class RecordFormat {
    private RecordFormat() {}

    /** @return the key of record {@code seq}: its decimal string */
    public static String key(long seq) {
        return Long.toString(seq);
    }

    /**
     * @return the value of record {@code seq}: {@code "value-<seq>-"} then {@code 50 + seq % 50} letters, letter
     *     {@code i} being {@code 'a' + (seq + i) % 26}
     */
    public static String value(long seq) {
        int fill = 50 + (int) (seq % 50);
        StringBuilder b =
                new StringBuilder(20 + fill).append("value-").append(seq).append('-');
        for (int i = 0; i < fill; i++) {
            b.append((char) ('a' + (seq + i) % 26));
        }
        return b.toString();
    }

    /**
     * @param key a record's key
     * @return the sequence number it encodes, or -1 if it is not a decimal number
     */
    public static long seqOf(String key) {
        if (key == null || key.isEmpty() || key.length() > 18) {
            return -1;
        }
        for (int i = 0; i < key.length(); i++) {
            if (key.charAt(i) < '0' || key.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(key);
    }
}
