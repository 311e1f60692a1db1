// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.Iterator;
import java.util.Map;

/**
 * Minimal JSON writer for the benchmark results: {@link Map} (string keys, insertion order kept by the caller's map),
 * {@link Iterable}, {@link Number}, {@link Boolean}, {@link CharSequence}, {@code null}. Non-finite doubles become
 * {@code null}. Stateless and thread-safe.
 */
final class Json {
    private Json() {}

    /**
     * @param value the value tree
     * @return it as indented JSON text
     */
    static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.append('\n').toString();
    }

    private static void write(StringBuilder sb, Object v, int indent) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append("{\n");
            Iterator<? extends Map.Entry<?, ?>> it = m.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                pad(sb, indent + 1);
                string(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                write(sb, e.getValue(), indent + 1);
                sb.append(it.hasNext() ? ",\n" : "\n");
            }
            pad(sb, indent);
            sb.append('}');
        } else if (v instanceof Iterable<?> list) {
            Iterator<?> it = list.iterator();
            if (!it.hasNext()) {
                sb.append("[]");
                return;
            }
            sb.append("[\n");
            while (it.hasNext()) {
                pad(sb, indent + 1);
                write(sb, it.next(), indent + 1);
                sb.append(it.hasNext() ? ",\n" : "\n");
            }
            pad(sb, indent);
            sb.append(']');
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (!Double.isFinite(d)) {
                sb.append("null");
            } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                sb.append((long) d);
            } else {
                sb.append(new java.math.BigDecimal(d)
                        .round(new java.math.MathContext(6))
                        .stripTrailingZeros()
                        .toPlainString());
            }
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else {
            string(sb, v.toString());
        }
    }

    private static void pad(StringBuilder sb, int indent) {
        sb.append("  ".repeat(indent));
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
