// KafkaJS producer for dev.kpipe.it.clients.KafkaJsIT (copied next to node_modules/kafkajs and run with node).
// Usage: node kafkajs-produce.js <bootstrap> <topic> <partitions> <count> <recordsPerSend> <idempotent> <maxInFlight>
// Sends records [0, count) in sends of recordsPerSend records, record seq to partition seq % partitions, with acks=all.
// Each send is one produce request (every partition has the same leader). Send k+1 is started as soon as the request
// of send k has been written to the socket, without waiting for its response, so up to maxInFlight produce requests
// are outstanding on the connection. KafkaJS does not keep concurrent send() calls in call order (each passes several
// awaits, among them the asynchronous encoding of its request, before it is queued on the connection: with all sends
// started at once, the last send's records were stored before those of the send before it, with and without
// idempotence), so the script waits for each write, seen through KafkaJS's socketFactory option, to make the order on
// the wire the order of the records. Without idempotence, retries are off: a failed send fails the run instead of
// being retried (a retry could reorder records).
// Prints 'RESULT kafkajs=<version> sent=<count> sends=<n> idempotent=<bool> maxInFlightRequests=<n>' on success;
// exits 1 with the error on standard error otherwise. Logs (WARN and up) go to standard error.
'use strict'
const net = require('net')
const { Kafka, logLevel } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version

const [bootstrap, topic, partitionsArg, countArg, perSendArg, idempotentArg, maxInFlightArg] = process.argv.slice(2)
const partitions = Number(partitionsArg)
const count = Number(countArg)
const perSend = Number(perSendArg)
const idempotent = idempotentArg === 'true'
const maxInFlight = Number(maxInFlightArg)

// Same as dev.kpipe.it.clients.RecordFormat.value(seq).
function value(seq) {
  const fill = 50 + (seq % 50)
  let v = 'value-' + seq + '-'
  for (let i = 0; i < fill; i++) {
    v += String.fromCharCode(97 + ((seq + i) % 26))
  }
  return v
}

function messages(from, n) {
  const out = []
  for (let seq = from; seq < from + n; seq++) {
    out.push({ key: String(seq), value: value(seq), partition: seq % partitions })
  }
  return out
}

const toStderr = () => ({ namespace, level, label, log }) => {
  process.stderr.write(`${label} [${namespace}] ${log.message} ${JSON.stringify(log)}\n`)
}

// KafkaJS writes each request with one socket.write: int32 size, int16 api key (0 = Produce), ...
let producesWritten = 0
let onProduceWritten = null
const socketFactory = ({ host, port, ssl, onConnect }) => {
  if (ssl) {
    throw new Error('TLS is not used by this test')
  }
  const socket = net.connect({ host, port }, onConnect)
  socket.setKeepAlive(true, 60000)
  const write = socket.write.bind(socket)
  socket.write = (data, ...rest) => {
    if (Buffer.isBuffer(data) && data.length >= 6 && data.readInt16BE(4) === 0) {
      producesWritten++
      if (onProduceWritten) {
        onProduceWritten()
      }
    }
    return write(data, ...rest)
  }
  return socket
}

function produceRequestsWritten(n) {
  return new Promise(resolve => {
    const check = () => {
      if (producesWritten >= n) {
        onProduceWritten = null
        resolve()
      }
    }
    onProduceWritten = check
    check()
  })
}

async function main() {
  const kafka = new Kafka({
    clientId: 'kpipe-kafkajs-it',
    brokers: bootstrap.split(','),
    logLevel: logLevel.WARN,
    logCreator: toStderr,
    socketFactory,
  })
  const producer = kafka.producer({
    idempotent,
    maxInFlightRequests: maxInFlight,
    allowAutoTopicCreation: false,
    ...(idempotent ? {} : { retry: { retries: 0 } }),
  })
  await producer.connect()
  const sends = []
  for (let from = 0; from < count; from += perSend) {
    sends.push(messages(from, Math.min(perSend, count - from)))
  }
  const results = []
  for (const batch of sends) {
    const written = producesWritten
    const result = producer.send({ topic, acks: -1, messages: batch })
    results.push(result)
    await Promise.race([produceRequestsWritten(written + 1), result])
  }
  await Promise.all(results)
  await producer.disconnect()
  console.log(`RESULT kafkajs=${kafkajsVersion} sent=${count} sends=${sends.length} idempotent=${idempotent}`
    + ` maxInFlightRequests=${maxInFlight}`)
}

main().catch(e => {
  process.stderr.write(`FAILED ${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
