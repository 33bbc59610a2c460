import { expect, test } from 'bun:test';
import { controllerEnabled } from './flags';

test('--controllers as kube-controller-manager reads it', () => {
  const on = (list: string[], name: string) => controllerEnabled({ controllers: list }, name);
  expect(on(['*'], 'root-ca-certificate-publisher-controller')).toBe(true);
  expect(on(['*', '-root-ca-certificate-publisher-controller'], 'root-ca-certificate-publisher-controller')).toBe(false);
  expect(on(['*', '-root-ca-certificate-publisher'], 'root-ca-certificate-publisher-controller')).toBe(false);
  expect(on(['*', '-root-ca-certificate-publisher'], 'serviceaccount-controller')).toBe(true);
  expect(on(['serviceaccount'], 'serviceaccount-controller')).toBe(true);
  expect(on(['serviceaccount'], 'namespace-controller')).toBe(false);
  expect(on([], 'namespace-controller')).toBe(false);
});
