// gpuvalue's search box: Pagefind's own UI over this version's index (pagefind/ beside this
// file), loaded as progressive enhancement. Without JavaScript, or when Pagefind's UI did not
// load, the box keeps its plain link to gpus.html. No inline script: the Content-Security-
// Policy allows only the site's own files (script-src 'self').
(function () {
  "use strict";
  var box = document.getElementById("search");
  // A page opened from a file (file://) cannot fetch the index: keep the link there too.
  if (!box || typeof window.PagefindUI !== "function" || !document.currentScript ||
      window.location.protocol === "file:") {
    return;
  }
  // This file sits in the version folder, so the bundle is at ./pagefind/ and every result
  // URL is resolved against the version folder, wherever the site is served from
  // (<date>/ or latest/).
  var root = new URL(".", document.currentScript.src);
  box.replaceChildren();
  box.classList.add("search-ready");
  new window.PagefindUI({
    element: "#search",
    bundlePath: new URL("pagefind/", root).pathname,
    baseUrl: root.pathname,
    showImages: false,
    resetStyles: false,
    excerptLength: 20,
    translations: { placeholder: "Search this version: a GPU, a model, a section" },
  });
})();
