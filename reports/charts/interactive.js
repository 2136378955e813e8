/* gpuvalue: interactive charts as a progressive enhancement (issue 25).
 *
 * Without JavaScript every chart is its SVG image. With it, this script replaces each
 * figure's image by the interactive view of the same chart, drawn from the figure's own
 * Vega-Lite spec (the "Vega-Lite spec" link of its caption) by the Vega bundle shipped
 * beside this file (charts/vega-bundle.js, loaded only on pages with a chart). Tooltips on
 * hover, scroll to zoom and drag to pan where the chart allows it, click a legend entry to
 * highlight it. Whatever fails (no fetch from file://, an old browser, a spec error), the
 * image stays. No inline script, no eval: the bundle's expression interpreter (ast: true)
 * runs under the page's Content-Security-Policy (script-src 'self').
 */
(function () {
  "use strict";
  var script = document.currentScript;
  // A page opened from disk cannot fetch its specs: it keeps its images.
  if (!script || location.protocol === "file:" || !window.fetch || !window.Promise) return;
  var bundleUrl = new URL("vega-bundle.js", script.src).href;

  function specUrl(figure) {
    var link = figure.querySelector('figcaption a[href$=".vl.json"]');
    if (!link) return null;
    var url = link.href;
    // A phone shows the narrow variant (<source media=...>): draw the narrow spec too.
    var source = figure.querySelector("picture source[media]");
    if (source && window.matchMedia(source.media).matches) {
      url = new URL(source.getAttribute("srcset").replace(/\.svg$/, ".vl.json"), location.href).href;
    }
    return url;
  }

  var figures = [].slice.call(document.querySelectorAll("figure")).filter(function (f) {
    return f.querySelector("img") && specUrl(f);
  });
  if (!figures.length) return;

  var bundle = null;
  function loadBundle() {
    if (!bundle) {
      bundle = new Promise(function (resolve, reject) {
        var tag = document.createElement("script");
        tag.src = bundleUrl;
        tag.onload = function () { window.vegaEmbed ? resolve(window.vegaEmbed) : reject(); };
        tag.onerror = reject;
        document.head.appendChild(tag);
      });
    }
    return bundle;
  }

  function enhance(figure) {
    var still = figure.querySelector("picture") || figure.querySelector("img");
    var holder = document.createElement("div");
    holder.className = "chart-live";
    // The interactive view keeps the chart's own size: a wide chart scrolls in its box,
    // never the page.
    holder.style.overflowX = "auto";
    holder.style.maxWidth = "100%";
    Promise.all([loadBundle(), fetch(specUrl(figure)).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.json();
    })]).then(function (got) {
      figure.insertBefore(holder, still);
      return got[0](holder, got[1], {
        renderer: "svg", actions: false, ast: true, tooltip: { theme: "light" }
      });
    }).then(function () {
      still.style.display = "none";
      figure.classList.add("live");
      var caption = figure.querySelector("figcaption");
      if (caption) {
        var hint = document.createElement("span");
        hint.className = "note";
        hint.textContent = " Interactive: hover for values; where a chart zooms, scroll " +
          "or drag (double-click resets); click a legend entry to highlight it.";
        caption.appendChild(hint);
      }
    }).catch(function () {
      if (holder.parentNode) holder.parentNode.removeChild(holder);
      still.style.display = "";
    });
  }

  // Charts are drawn as they come near the screen: a page of eight charts does not
  // compile them all at once.
  if ("IntersectionObserver" in window) {
    var watch = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          watch.unobserve(entry.target);
          enhance(entry.target);
        }
      });
    }, { rootMargin: "400px" });
    figures.forEach(function (f) { watch.observe(f); });
  } else {
    figures.forEach(enhance);
  }
})();
