// Progressive enhancement for the console; every page works without it.

document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const text = source ? (source.value ?? source.textContent) : '';
  navigator.clipboard?.writeText(text.trim()).then(() => {
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  });
});
// Destructive forms ask first: <form data-confirm="Revoke this key?">.
document.addEventListener('submit', (event) => {
  const message = event.target.dataset?.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
// A region that follows a changing state reloads itself: <div data-refresh="/console/calls/x/status" data-refresh-every="1000">.
// A redirect (the session ended: the console answers 303 to the sign-in page) or a refusal stops
// the polling and leaves the region as it was, with a note to reload.
function sessionEnded(region) {
  if (region.nextElementSibling?.classList.contains('session-ended')) return;
  const note = document.createElement('p');
  note.className = 'flash flash-error session-ended';
  note.setAttribute('role', 'status');
  const link = document.createElement('a');
  link.href = window.location.href;
  link.textContent = 'Reload the page';
  note.append('Your session has ended. ', link, ' to sign in again.');
  region.after(note);
}
for (const region of document.querySelectorAll('[data-refresh]')) {
  const every = Number(region.dataset.refreshEvery || 2000);
  const tick = async () => {
    try {
      const response = await fetch(region.dataset.refresh, {
        headers: { accept: 'text/html' },
        redirect: 'manual',
      });
      if (
        response.type === 'opaqueredirect' ||
        response.redirected ||
        response.status === 401 ||
        response.status === 403
      ) {
        sessionEnded(region);
        return;
      }
      if (response.ok) {
        region.innerHTML = await response.text();
        if (region.querySelector('[data-final]')) return;
      }
    } catch {}
    setTimeout(tick, every);
  };
  setTimeout(tick, every);
}
// A top-up's price follows the minutes typed, computed as the server prices it (minutes × rate,
// in the currency's minor unit, rounded half up): <output data-top-up-price for="…">.
for (const output of document.querySelectorAll('output[data-top-up-price]')) {
  const input = document.getElementById(output.htmlFor.value);
  if (!input) continue;
  const { rateMicros, digits, currency, each, plan } = output.dataset;
  const money = new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency,
    minimumFractionDigits: Number(digits),
    maximumFractionDigits: Number(digits),
  });
  input.addEventListener('input', () => {
    const text = input.value.trim();
    const minutes = /^\d{1,6}$/.test(text) ? Number(text) : 0;
    if (minutes < Number(input.min) || minutes > Number(input.max)) {
      output.textContent = `${each} a minute (${plan} plan)`;
      return;
    }
    const minor = (BigInt(minutes) * BigInt(rateMicros) * 10n ** BigInt(digits) + 500000n) / 1000000n;
    const amount = money.format(Number(minor) / 10 ** Number(digits));
    output.textContent = `${minutes.toLocaleString('en-US')} minute${minutes === 1 ? '' : 's'} cost ${amount} at ${each} a minute`;
  });
}
// The narrow screens' Menu (a <details>): Escape closes it and gives the focus back to its button;
// a click outside it closes it too.
for (const menu of document.querySelectorAll('details[data-menu]')) {
  menu.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !menu.open) return;
    menu.open = false;
    menu.querySelector('summary')?.focus();
  });
  document.addEventListener('click', (event) => {
    if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
}
