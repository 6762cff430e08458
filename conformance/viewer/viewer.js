// The stepper: one step at a time, keyboard and slider, #step=N in the address.
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
    where.textContent = "step " + (current + 1) + " of " + steps.length;
    if (history.replaceState) { history.replaceState(null, "", "#step=" + (current + 1)); }
  }

  function fromHash() {
    var m = /^#step[=-](\d+)$/.exec(location.hash);
    return m ? parseInt(m[1], 10) - 1 : null;
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
    else if (e.key === "d" && data.first_divergence) { show(data.first_divergence - 1); }
    else { return; }
    e.preventDefault();
  });
  var start = fromHash();
  show(start !== null ? start : (data.first_divergence ? data.first_divergence - 1 : 0));
})();
