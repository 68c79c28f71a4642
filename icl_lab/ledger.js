(function() {
  var box = document.getElementById("ICLUID-f"), all = document.getElementById("ICLUID-b");
  var count = document.getElementById("ICLUID-n"), rows = all.querySelectorAll("tbody tr"), total = rows.length;
  function apply() {
    var want = {}, any = false;
    box.querySelectorAll("[data-filter]").forEach(function(el) {
      want[el.getAttribute("data-filter")] = el.value.toLowerCase(); any = any || !!el.value; });
    var shown = 0;
    Array.prototype.forEach.call(rows, function(tr) {
      var ok = ["paper", "kind", "status"].every(function(k) { return !want[k] || tr.getAttribute("data-" + k) === want[k]; })
               && (!want.text || tr.textContent.toLowerCase().indexOf(want.text) >= 0);
      tr.style.display = ok ? "" : "none"; if (ok) shown++;
    });
    all.querySelectorAll("details.icl-fold").forEach(function(d) {
      var n = Array.prototype.filter.call(d.querySelectorAll("tbody tr"), function(tr) { return tr.style.display !== "none"; }).length;
      d.style.display = n ? "" : "none"; if (any) d.open = n > 0;
    });
    count.textContent = shown + " of " + total + " claims";
  }
  box.addEventListener("input", apply); box.addEventListener("change", apply);
})();
