fetch("/api/stage").then((r) => r.json()).then((j) => {
  document.getElementById("stage").textContent = `${location.pathname} on ${j.stage}`;
});
