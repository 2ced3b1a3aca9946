const walk = `x AND (lower(u.name) LIKE $2 ESCAPE '\\' OR lower(u.email) LIKE $2 ESCAPE '\\') ORDER BY`;
const walkS = walk.replace(/\(lower\(u\.name\).*\) ORDER/, "u.search_text LIKE $2 ESCAPE '\\' ORDER");
console.log(walkS)
