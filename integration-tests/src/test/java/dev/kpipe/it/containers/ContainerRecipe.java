// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The container recipe of docs/operations.md ("The {@code apache/kafka} image"), read from the page: its Dockerfile
 * and its single-node {@code docker run}. The suite builds its kpipe image with the same Dockerfile ({@code
 * src/test/docker/kpipe/Dockerfile}, {@link LocalKafkaImage}; {@code ContainerRecipeTest} checks they are the same)
 * and runs the {@code docker run} line's environment ({@code ContainerRecipeIT}).
 *
 * @param dockerfile the Dockerfile's lines, as on the page
 * @param env the {@code -e} variables of {@code docker run}, in the page's order
 * @param publish the {@code -p} argument, e.g. {@code 9092:9092}
 * @param image the image {@code docker run} runs
 */
record ContainerRecipe(List<String> dockerfile, Map<String, String> env, String publish, String image) {

    static final String SECTION = "### The `apache/kafka` image";

    /** @return the recipe of {@code <kpipe.it.docs.dir>/operations.md} */
    static ContainerRecipe fromDocs() {
        Path page = Path.of(System.getProperty("kpipe.it.docs.dir", "../docs"), "operations.md");
        try {
            return parse(Files.readString(page));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the recipe in {@code page}: the section's first code block, and its block that starts {@code docker run} */
    static ContainerRecipe parse(String page) {
        List<List<String>> blocks = new ArrayList<>();
        boolean inSection = false;
        List<String> block = null;
        for (String line : page.split("\n", -1)) {
            if (block == null && line.startsWith("#")) {
                if (inSection) {
                    break;
                }
                inSection = line.strip().equals(SECTION);
            } else if (inSection && line.startsWith("```")) {
                if (block == null) {
                    block = new ArrayList<>();
                } else {
                    blocks.add(block);
                    block = null;
                }
            } else if (block != null) {
                block.add(line);
            }
        }
        if (blocks.isEmpty()) {
            throw new IllegalStateException("no code block under '" + SECTION + "' in operations.md");
        }
        List<String> run = blocks.stream()
                .filter(b -> !b.isEmpty() && b.get(0).startsWith("docker run "))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no 'docker run' block under '" + SECTION + "'"));
        List<String> words = words(String.join(
                " ",
                run.stream()
                        .map(l -> l.endsWith("\\") ? l.substring(0, l.length() - 1) : l)
                        .toList()));
        Map<String, String> env = new LinkedHashMap<>();
        String publish = null;
        String image = null;
        for (int i = 2; i < words.size(); i++) { // after "docker run"
            String w = words.get(i);
            if (w.equals("-e")) {
                String[] kv = words.get(++i).split("=", 2);
                env.put(kv[0], kv[1]);
            } else if (w.equals("-p")) {
                publish = words.get(++i);
            } else {
                image = w;
            }
        }
        return new ContainerRecipe(List.copyOf(blocks.get(0)), env, publish, image);
    }

    /** @return the words of a shell command line: split at blanks, double quotes grouping and removed */
    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        boolean quoted = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
                word = word == null ? new StringBuilder() : word;
            } else if (Character.isWhitespace(c) && !quoted) {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }

    /** @return the Dockerfile's instructions: its lines without comments and blank lines */
    static List<String> instructions(List<String> dockerfile) {
        return dockerfile.stream()
                .map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .toList();
    }
}
