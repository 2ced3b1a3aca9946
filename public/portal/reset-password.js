// The reset page (src/portal/password-reset.ts): the emailed link carries its token in the
// address's fragment (#token=…), which browsers never send to a server or in a Referer. This moves
// it into the form's hidden field, takes it out of the address bar and the history, and shows the
// form; without a token it shows how to get a new link instead.
(() => {
  const form = document.getElementById('reset-form');
  const token = document.getElementById('token');
  const missing = document.getElementById('reset-missing');
  if (!form || !token || !missing) return;
  if (!token.value) {
    const found = new URLSearchParams(window.location.hash.slice(1)).get('token');
    if (found) token.value = found;
  }
  if (window.location.hash) {
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  if (token.value) {
    form.hidden = false;
    // The field the server refused, else the first one.
    (form.querySelector('[aria-invalid="true"]') ?? document.getElementById('password'))?.focus();
  } else {
    missing.hidden = false;
  }
})();
