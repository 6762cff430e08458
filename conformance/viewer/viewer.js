// The stepper: one step at a time, keyboard and slider, #step=N in the address. A long run's page holds only
// some of its steps (page.py PAGE_STEPS), so a section is found by its data-step, never by its position.
(function () {
  "use strict";
  var steps = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  if (!steps.length) { return; }
  var data = JSON.parse(document.getElementById("run-data").textContent);
  var slider = document.getElementById("slider");
  var where = document.getElementById("where");
  var ticks = Array.prototype.slice.call(document.querySelectorAll(".ribbon .tick"));
  var current = 0;
  document.body.classList.add("js");
  document.getElementById("stepper").hidden = false;

  function show(i) {
    current = Math.max(0, Math.min(steps.length - 1, i));
    steps.forEach(function (s, k) { s.classList.toggle("current", k === current); });
    ticks.forEach(function (t, k) {
      if (k === current) { t.setAttribute("aria-current", "step"); } else { t.removeAttribute("aria-current"); }
    });
    slider.value = String(current + 1);
    var step = steps[current].getAttribute("data-step");
    where.textContent = "step " + step + " of " + data.steps;
    if (history.replaceState) { history.replaceState(null, "", "#step=" + step); }
  }

  function at(step) {  // the shown section of `step`, or of the last shown step before it
    var found = 0;
    steps.forEach(function (s, k) { if (parseInt(s.getAttribute("data-step"), 10) <= step) { found = k; } });
    return found;
  }

  function fromHash() {
    var m = /^#step[=-](\d+)$/.exec(location.hash);
    return m ? at(parseInt(m[1], 10)) : null;
  }

  document.getElementById("prev").addEventListener("click", function () { show(current - 1); });
  document.getElementById("next").addEventListener("click", function () { show(current + 1); });
  slider.addEventListener("input", function () { show(parseInt(slider.value, 10) - 1); });
  ticks.forEach(function (t, k) {
    t.addEventListener("click", function (e) { e.preventDefault(); show(k); });
  });
  document.addEventListener("keydown", function (e) {
    if (e.target === slider) { return; }
    if (e.key === "ArrowRight" || e.key === "j") { show(current + 1); }
    else if (e.key === "ArrowLeft" || e.key === "k") { show(current - 1); }
    else if (e.key === "Home") { show(0); }
    else if (e.key === "End") { show(steps.length - 1); }
    else if (e.key === "d" && data.first_divergence) { show(at(data.first_divergence)); }
    else { return; }
    e.preventDefault();
  });
  var start = fromHash();
  show(start !== null ? start : (data.first_divergence ? at(data.first_divergence) : 0));
})();
