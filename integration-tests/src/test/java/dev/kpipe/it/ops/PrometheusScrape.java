// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * One scrape of a Prometheus text exposition ({@code /metrics}): the value of every unlabelled series and the type of
 * every family ({@code # TYPE}).
 *
 * @param text the body as served
 * @param values series name to value (the last sample of that name; kpipe's series have no labels)
 * @param types family name to type ({@code counter}, {@code gauge}, ...)
 */
record PrometheusScrape(String text, Map<String, Double> values, Map<String, String> types) {

    /**
     * @param url e.g. {@code http://127.0.0.1:PORT/metrics}
     * @return the scrape
     * @throws IOException if the request fails or does not answer 200
     */
    static PrometheusScrape scrape(String url) throws IOException, InterruptedException {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(30))
                        .header("Accept", "text/plain")
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + url + ": HTTP " + r.statusCode());
        }
        return parse(r.body());
    }

    /** @return the scrape of this exposition text */
    static PrometheusScrape parse(String text) {
        Map<String, Double> values = new TreeMap<>();
        Map<String, String> types = new TreeMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] t = line.split(" ");
                types.put(t[2], t[3]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                int brace = line.indexOf('{');
                int space = line.indexOf(' ');
                String name = line.substring(0, brace >= 0 && brace < space ? brace : space);
                String rest = line.substring(brace >= 0 && brace < space ? line.indexOf('}') + 2 : space + 1);
                values.put(name, Double.valueOf(rest.split(" ")[0]));
            }
        }
        return new PrometheusScrape(text, values, types);
    }

    /** @return the series' value; fails if it is not there */
    double get(String series) {
        Double v = values.get(series);
        if (v == null) {
            throw new AssertionError(series + " not in the scrape");
        }
        return v;
    }

    /**
     * @param series a sample name
     * @return the type of its family: a counter's samples are {@code <family>_total}
     */
    String typeOf(String series) {
        String t = types.get(series);
        if (t == null && series.endsWith("_total")) {
            t = types.get(series.substring(0, series.length() - "_total".length()));
        }
        return t;
    }
}
