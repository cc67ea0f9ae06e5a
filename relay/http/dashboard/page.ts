// The dashboard's one HTML shell: every view is drawn by the modules in assets/ (app.js routes by the URL hash).
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>convoy</title>
<link rel="stylesheet" href="/dashboard/assets/style.css">
<script defer src="/dashboard/assets/app.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="#/">convoy</a>
  <span id="who" class="who"></span>
  <button id="signout" type="button" hidden>Sign out</button>
</header>
<main id="main" tabindex="-1"><p>Loading…</p></main>
</body>
</html>
`;
