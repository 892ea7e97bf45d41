#!/usr/bin/env node
process.stdout.write(`${require("./index.js")(process.argv.slice(2).join(" "))}\n`);
