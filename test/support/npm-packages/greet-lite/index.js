const shout = require("@atelier-fixture/shout-lite");
module.exports = (name) => shout(`hello, ${name}`);
