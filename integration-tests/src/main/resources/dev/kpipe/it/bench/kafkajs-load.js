// KafkaJS load for the benchmark's S1 (dev.kpipe.it.bench.ClientProcess copies it next to node_modules/kafkajs).
// Usage: node kafkajs-load.js <bootstrap> <topic> <clientId> <recordBytes> <recordsPerSend> <idempotent> <maxInFlight>
// Sends records of recordBytes bytes into partition 0 with acks=all, flat out, until it is stopped (SIGTERM): each
// send() is one produce request of recordsPerSend records; at most maxInFlight + 1 sends are outstanding, so KafkaJS
// always has the next request ready while it keeps up to maxInFlightRequests on the connection. Without idempotence,
// retries are off. Prints 'READY kafkajs=<version>' once connected; a failed send is printed on standard error
// ('FAILED ...') and ends the run with exit code 1. Logs (WARN and up) go to standard error.
// (No template literals: Maven filters this file.)
'use strict'
const { Kafka, logLevel } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version

const [bootstrap, topic, clientId, recordBytesArg, perSendArg, idempotentArg, maxInFlightArg] = process.argv.slice(2)
const recordBytes = Number(recordBytesArg)
const perSend = Number(perSendArg)
const idempotent = idempotentArg === 'true'
const maxInFlight = Number(maxInFlightArg)

const value = Buffer.alloc(recordBytes, 'a')
const messages = []
for (let i = 0; i < perSend; i++) {
  messages.push({ value, partition: 0 })
}

const toStderr = () => ({ namespace, level, label, log }) => {
  process.stderr.write(label + ' [' + namespace + '] ' + log.message + ' ' + JSON.stringify(log) + '\n')
}

let stopping = false
process.on('SIGTERM', () => {
  stopping = true
  process.exit(0)
})

async function main() {
  const kafka = new Kafka({ clientId, brokers: bootstrap.split(','), logLevel: logLevel.WARN, logCreator: toStderr })
  const producer = kafka.producer({
    idempotent,
    maxInFlightRequests: maxInFlight,
    allowAutoTopicCreation: false,
    ...(idempotent ? {} : { retry: { retries: 0 } }),
  })
  await producer.connect()
  console.log('READY kafkajs=' + kafkajsVersion)
  const outstanding = new Set()
  while (!stopping) {
    const send = producer.send({ topic, acks: -1, messages }).catch(e => {
      if (!stopping) {
        process.stderr.write('FAILED ' + (e && e.stack ? e.stack : e) + '\n')
        process.exit(1)
      }
    })
    outstanding.add(send)
    send.finally(() => outstanding.delete(send))
    if (outstanding.size > maxInFlight) {
      await Promise.race(outstanding)
    }
  }
}

main().catch(e => {
  process.stderr.write('FAILED ' + (e && e.stack ? e.stack : e) + '\n')
  process.exit(1)
})
