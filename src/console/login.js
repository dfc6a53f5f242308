// The log-in form: fetch a CSRF token, post name and password, go to the console.

(() => {
  const form = document.getElementById("login-form");
  const error = document.getElementById("login-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      const csrf = await (await fetch("/api/v1/csrf", { credentials: "same-origin" })).json();
      const res = await fetch("/api/v1/session", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", "x-csrf-token": csrf.csrfToken },
        body: JSON.stringify({ name: form.elements.name.value, password: form.elements.password.value }),
      });
      if (res.ok) {
        // Back to the page the link pointed at (an approver's link to a batch survives the log-in).
        window.location.assign(`/${window.location.hash}`);
        return;
      }
      const body = await res.json().catch(() => ({}));
      error.textContent = body.error?.message ?? `log-in failed (${res.status})`;
      form.elements.password.focus();
    } catch (err) {
      error.textContent = `the server did not answer: ${err.message}`;
    }
  });
})();
