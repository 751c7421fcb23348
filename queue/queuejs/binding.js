// The env object of a queues.producers binding (a WorkerQueue) and the
// MessageBatch a queue() handler receives. Evaluates to an object of two
// factories over the natives (queue/queuejs/binding.go). Argument checks
// and their texts are workerd's (src/workerd/api/queue.c++, recorded in
// internal/conformance/testdata/celld/queues-limits); what workerd's
// broker refuses (limits) arrives as a rejection with its text.
(function () {
  "use strict";

  const unknown = () => new Error("Unknown Internal Error (15000)");
  const typeName = (v) => (v === null ? "object" : typeof v);

  // encode turns one body into [bytes or string, contentType].
  const encode = (native, body, contentType, dflt) => {
    if (body === undefined) throw new TypeError("Message body cannot be undefined");
    const ct = contentType === undefined ? dflt : String(contentType);
    switch (ct) {
      case "text":
        if (typeof body !== "string") {
          throw new TypeError(`Content Type "text" requires a value of type string, but received: ${typeName(body)}`);
        }
        return [body, ct];
      case "bytes":
        if (!ArrayBuffer.isView(body)) {
          throw new TypeError(`Content Type "bytes" requires a value of type ArrayBufferView, but received: ${typeName(body)}`);
        }
        return [new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice(), ct];
      case "json": {
        const text = JSON.stringify(body);
        if (text === undefined) throw unknown();
        return [text, ct];
      }
      case "v8":
        return [native.serialize(body), ct];
      default:
        throw new TypeError(`Unsupported queue message content type: ${ct}`);
    }
  };

  // delayOf converts delaySeconds as workerd's IDL does (an integer);
  // undefined means the producer's delivery_delay.
  const delayOf = (v) => {
    if (v === undefined || v === null) return undefined;
    const n = Math.trunc(Number(v));
    return Number.isFinite(n) ? n : 0;
  };

  const response = (m) => {
    const metrics = { backlogCount: m[0], backlogBytes: m[1] };
    if (m[2] > 0) metrics.oldestMessageTimestamp = new Date(m[2]);
    return { metadata: { metrics } };
  };

  const makeQueue = (native, dflt) => {
    class WorkerQueue {
      async send(body, options) {
        if (arguments.length === 0) {
          throw new TypeError("Failed to execute 'send' on 'WorkerQueue': parameter 1 is not of type 'JsValue'.");
        }
        const [data, ct] = encode(native, body, options?.contentType, dflt);
        return response(await native.send([[data, ct, delayOf(options?.delaySeconds)]], undefined));
      }
      async sendBatch(messages, options) {
        if (messages === undefined || messages === null || typeof messages[Symbol.iterator] !== "function") {
          throw new TypeError("Failed to execute 'sendBatch' on 'WorkerQueue': parameter 1 is not of type 'Sequence'.");
        }
        const list = [];
        for (const m of messages) {
          const [data, ct] = encode(native, m?.body, m?.contentType, dflt);
          list.push([data, ct, delayOf(m?.delaySeconds)]);
        }
        if (list.length === 0) throw new TypeError("sendBatch() requires at least one message");
        return response(await native.send(list, delayOf(options?.delaySeconds)));
      }
      async metrics() {
        const m = response(await native.metrics()).metadata.metrics;
        return m;
      }
    }
    return new WorkerQueue();
  };

  // decode turns a stored body (an ArrayBuffer) back into its value.
  const decode = (native, data, ct) => {
    switch (ct) {
      case "text":
        return new TextDecoder().decode(new Uint8Array(data));
      case "json":
        return JSON.parse(new TextDecoder().decode(new Uint8Array(data)));
      case "bytes":
        return data;
      default:
        return native.deserialize(data);
    }
  };

  const retryDelay = (options) => (options && options.delaySeconds !== undefined ? delayOf(options.delaySeconds) : undefined);

  // makeBatch builds a MessageBatch. Each settlement call goes to Go at
  // once (native.settle), which keeps the first one per message.
  const makeBatch = (native, queue, msgs, metrics) => {
    class Message {
      #i;
      constructor(i, m) {
        this.#i = i;
        Object.defineProperties(this, {
          id: { value: m[0], enumerable: true },
          timestamp: { value: new Date(m[1]), enumerable: true },
          body: { value: decode(native, m[2], m[3]), enumerable: true },
          attempts: { value: m[4], enumerable: true },
        });
      }
      ack() { native.settle(this.#i, false, undefined); }
      retry(options) { native.settle(this.#i, true, retryDelay(options)); }
    }
    class MessageBatch {
      constructor() {
        const m = { backlogCount: metrics[0], backlogBytes: metrics[1] };
        if (metrics[2] > 0) m.oldestMessageTimestamp = new Date(metrics[2]);
        Object.defineProperties(this, {
          queue: { value: queue, enumerable: true },
          messages: { value: Object.freeze(msgs.map((x, i) => new Message(i, x))), enumerable: true },
          metadata: { value: { metrics: m }, enumerable: true },
        });
      }
      ackAll() { native.settle(-1, false, undefined); }
      retryAll(options) { native.settle(-1, true, retryDelay(options)); }
    }
    return new MessageBatch();
  };

  return { makeQueue, makeBatch };
})
