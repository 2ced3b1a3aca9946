// Progressive enhancement for the console; every page works without it.
'use strict';
document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const text = source ? (source.value ?? source.textContent) : '';
  navigator.clipboard?.writeText(text.trim()).then(() => {
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => { button.textContent = label; }, 1500);
  });
});
// Destructive forms ask first: <form data-confirm="Revoke this key?">.
document.addEventListener('submit', (event) => {
  const message = event.target.dataset?.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
// A region that follows a changing state reloads itself: <div data-refresh="/console/calls/x/status" data-refresh-every="1000">.
for (const region of document.querySelectorAll('[data-refresh]')) {
  const every = Number(region.dataset.refreshEvery || 2000);
  const tick = async () => {
    try {
      const response = await fetch(region.dataset.refresh, { headers: { accept: 'text/html' } });
      if (response.ok) {
        region.innerHTML = await response.text();
        if (region.querySelector('[data-final]')) return;
      }
    } catch {}
    setTimeout(tick, every);
  };
  setTimeout(tick, every);
}
