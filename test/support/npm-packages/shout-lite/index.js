module.exports = (text) => `${text.toUpperCase()}!`;
