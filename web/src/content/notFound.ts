export const notFoundContent = {
  documentTitle: 'Page not found · GOODY',
  code: '404',
  message: 'Oops! Page not found.',
  returnHome: 'Return to Home',
} as const;
