// rules-unit-testing hands out instances of the full Firestore SDK (the compat API over the modular one), and
// only the full SDK's functions can drive them; the Lite SDK the web app uses would reject them. The rules
// decide the same way whichever SDK sends the request, so the suite loses nothing by it.
// biome-ignore lint/style/noRestrictedImports: the rules suite needs the SDK rules-unit-testing is built on (see above).
export * from 'firebase/firestore';
