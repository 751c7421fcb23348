// The chat page: join ?room= as ?name=, see who is here, the history, and
// what others say.
export const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>celld chat</title>
<style>
body { font: 15px system-ui, sans-serif; max-width: 40em; margin: 2em auto; }
#members { color: #555; } #messages { list-style: none; padding: 0; }
#messages li { padding: .2em 0; } .name { font-weight: 600; margin-right: .5em; }
form { display: flex; gap: .5em; } #text { flex: 1; }
</style></head>
<body>
<h1>Room <span id="room"></span></h1>
<p>Here: <span id="members"></span> <span id="status">connecting…</span></p>
<ul id="messages"></ul>
<form id="form"><input id="text" autocomplete="off" placeholder="Say something"><button id="send">Send</button></form>
<script>
const q = new URLSearchParams(location.search);
const room = q.get("room") || "lobby";
const name = q.get("name") || "guest-" + Math.floor(Math.random() * 1000);
document.getElementById("room").textContent = room;
const list = document.getElementById("messages");
function show(m) {
  const li = document.createElement("li");
  const who = document.createElement("span");
  who.className = "name";
  who.textContent = m.name;
  li.append(who, document.createTextNode(m.text));
  list.append(li);
}
let ws;
function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(proto + "//" + location.host + "/room/" + encodeURIComponent(room) + "/ws?name=" + encodeURIComponent(name));
  ws.onopen = () => { document.getElementById("status").textContent = ""; document.body.dataset.ready = "1"; };
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.type === "history") { list.replaceChildren(); m.messages.forEach(show); }
    if (m.type === "message") show(m);
    if (m.type === "members") document.getElementById("members").textContent = m.members.join(", ");
  };
  ws.onclose = (e) => {
    document.body.dataset.ready = "";
    document.getElementById("status").textContent = "reconnecting…";
    setTimeout(connect, e.code === 1012 ? 100 : 1000);
  };
}
connect();
document.getElementById("form").onsubmit = (e) => {
  e.preventDefault();
  const input = document.getElementById("text");
  if (input.value && ws.readyState === 1) ws.send(JSON.stringify({ text: input.value }));
  input.value = "";
};
setInterval(() => { if (ws.readyState === 1) ws.send("ping"); }, 30000);
</script>
</body></html>`;
