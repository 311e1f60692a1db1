/**
 * What the harness puts inside the JVMs it starts: {@link dev.kpipe.it.watchdog.ParentWatchdog} ends a broker,
 * controller or ZooKeeper JVM when the JVM that started it is gone. Only the JDK is used here, so that the class can be
 * copied alone onto a Kafka distribution's class path.
 */
package dev.kpipe.it.watchdog;
